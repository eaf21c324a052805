import { type Event, once } from '../../server/events.js';

/** The next value an event gives. */
export function nextEvent<T>(event: Event<T>): Promise<T> {
  return new Promise((resolve) => once(event, resolve));
}
