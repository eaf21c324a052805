/** Shows snapshot progress on a terminal. */
export interface ProgressLine {
  /** Receives `(done, total?)` from the snapshotter. */
  update: (done: number, total?: number) => void;
  /** Clears the line. */
  done: () => void;
}

const NUMBER = new Intl.NumberFormat('en-US');

/**
 * A single self-overwriting line on `stream` ("Snapshotting… 12,345 files"),
 * shown only when the stream is a terminal, only after the first second,
 * and redrawn at most every 100 ms.
 */
export function progressLine(stream: NodeJS.WriteStream, label = 'Snapshotting…', delayMs = 1000): ProgressLine {
  if (!stream.isTTY) return { update: () => undefined, done: () => undefined };
  const startedAt = Date.now();
  let last = 0;
  let shown = false;
  return {
    update: (done, total) => {
      const now = Date.now();
      if (now - startedAt < delayMs || now - last < 100) return;
      last = now;
      shown = true;
      const of = total !== undefined && total > 0 ? ` of ${NUMBER.format(total)}` : '';
      stream.write(`\r\x1b[2K${label} ${NUMBER.format(done)}${of} files`);
    },
    done: () => {
      if (shown) stream.write('\r\x1b[2K');
      shown = false;
    },
  };
}
