/** Something with frames waiting to be written. */
export interface Flushable {
  /** Writes everything waiting, in order. */
  flush(): void;
}

/** Peers written per turn of the event loop; between two turns the server reads what clients sent. */
const PEERS_PER_TURN = 64;

/**
 * The peers with frames waiting, written shortly after the code that queued
 * them returns: every frame queued for one peer in the meantime goes out in
 * one write, and a fan-out to many peers is written a slice at a time, the
 * event loop free in between, instead of one long run of writes.
 * A peer is written in the order it was first queued.
 */
class FlushQueue {
  private readonly waiting = new Set<Flushable>();
  private scheduled = false;

  add(peer: Flushable): void {
    this.waiting.add(peer);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.run);
    }
  }

  delete(peer: Flushable): void {
    this.waiting.delete(peer);
  }

  private readonly run = (): void => {
    this.scheduled = false;
    let written = 0;
    for (const peer of this.waiting) {
      this.waiting.delete(peer);
      peer.flush();
      if (++written === PEERS_PER_TURN) break;
    }
    if (this.waiting.size > 0 && !this.scheduled) {
      this.scheduled = true;
      setImmediate(this.run);
    }
  };
}

/** The one queue of the process: peers of every server in it take turns. */
export const flushQueue = new FlushQueue();
