/** A minimal typed event emitter; listeners are called synchronously in registration order. */
export class Emitter<Events extends { [name: string]: unknown }> {
  private readonly listeners = new Map<keyof Events, Set<(payload: never) => void>>();

  /** Adds a listener; returns a function that removes it. */
  on<E extends keyof Events>(event: E, listener: (payload: Events[E]) => void): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener as (payload: never) => void);
    return () => set.delete(listener as (payload: never) => void);
  }

  /** Calls every listener of `event`. */
  emit<E extends keyof Events>(event: E, payload: Events[E]): void {
    for (const listener of this.listeners.get(event) ?? []) (listener as (payload: Events[E]) => void)(payload);
  }
}
