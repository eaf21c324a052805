/**
 * Runs async tasks one at a time, in the order they were queued. A failing
 * task rejects only its own promise; the queue keeps going.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private pending = 0;

  /** Number of tasks queued or running. */
  get size(): number {
    return this.pending;
  }

  run<T>(task: () => Promise<T>): Promise<T> {
    this.pending++;
    const result = this.tail.then(task);
    this.tail = result.then(
      () => this.pending--,
      () => this.pending--,
    );
    return result;
  }

  /** Resolves once everything queued so far has finished. */
  async idle(): Promise<void> {
    await this.tail;
  }
}
