/**
 * The one way parts of the server tell each other what happened: a typed
 * event a listener subscribes to, getting back a {@link Disposable} that
 * unsubscribes it. `service.ts` keeps what it connects and disposes it, in
 * order, when the server stops.
 */

/** Something to let go of: a subscription, a part the service started. */
export interface Disposable {
  dispose(): void;
}

/** Subscribes a listener; the returned {@link Disposable} unsubscribes it. */
export type Event<T> = (listener: (value: T) => void) => Disposable;

/** A {@link Disposable} that runs `fn` once. */
export function toDisposable(fn: () => void): Disposable {
  let done = false;
  return {
    dispose: () => {
      if (done) return;
      done = true;
      fn();
    },
  };
}

/**
 * The source of one {@link Event}. Listeners run synchronously in the order
 * they subscribed, on a copy of the list taken when the event fires (one
 * unsubscribed meanwhile still hears that event); a listener that throws
 * stops the rest and the throw reaches the caller of {@link fire}, as with
 * Node's `EventEmitter`.
 */
export class Emitter<T = void> {
  private listeners: ((value: T) => void)[] = [];
  private disposed = false;

  /** Subscribe here. */
  readonly event: Event<T> = (listener) => {
    if (this.disposed) return toDisposable(() => undefined);
    this.listeners.push(listener);
    return toDisposable(() => {
      const at = this.listeners.indexOf(listener);
      if (at >= 0) this.listeners.splice(at, 1);
    });
  };

  /** Tells every listener. */
  fire(value: T): void {
    if (this.listeners.length === 0) return;
    for (const listener of [...this.listeners]) listener(value);
  }

  /** Unsubscribes everyone; later subscriptions and events do nothing. */
  dispose(): void {
    this.disposed = true;
    this.listeners = [];
  }
}

/** Subscribes to the next occurrence of an event only. */
export function once<T>(event: Event<T>, listener: (value: T) => void): Disposable {
  let fired = false;
  const subscription = event((value) => {
    if (fired) return;
    fired = true;
    subscription.dispose();
    listener(value);
  });
  return subscription;
}

/** Disposables let go of together, the last added first. */
export class DisposableStore implements Disposable {
  private items: Disposable[] = [];
  private disposed = false;

  /** Keeps `item` (disposed at once when the store already is). */
  add<D extends Disposable>(item: D): D {
    if (this.disposed) item.dispose();
    else this.items.push(item);
    return item;
  }

  dispose(): void {
    this.disposed = true;
    const items = this.items.reverse();
    this.items = [];
    for (const item of items) item.dispose();
  }
}
