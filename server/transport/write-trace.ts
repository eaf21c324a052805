import type { OutboundFrame } from '../channels/frames.js';
import { toDisposable, type Disposable } from '../events.js';

/** Told of one write to a client's socket: the peer written to and the frames of that write, oldest first. */
export type WriteObserver = (peer: object, frames: readonly OutboundFrame[]) => void;

let current: WriteObserver | undefined;

/**
 * Tells `observer` of every write the transport makes to a client's socket,
 * as it makes it, until disposed: which peer, and the frames the write
 * carries. For tests of the order clients are written in (the dispatching
 * client's echo before anyone else's copy) and benchmarks that time the
 * writes; one observer at a time in the process. Nothing is traced while
 * none is set: the writes test one variable.
 */
export function observeWrites(observer: WriteObserver): Disposable {
  if (current) throw new Error('writes are already observed');
  current = observer;
  return toDisposable(() => {
    if (current === observer) current = undefined;
  });
}

/** The observer of writes, if one is set (read by the peer on each write). */
export function writeObserver(): WriteObserver | undefined {
  return current;
}
