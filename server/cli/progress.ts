/** Shows snapshot progress on stderr. */
export interface ProgressLine {
  /** Receives `(done, total?)` from the snapshotter. */
  update: (done: number, total?: number) => void;
  /** Clears the line (a terminal) or closes the report with the count (anything else). */
  done: () => void;
}

const NUMBER = new Intl.NumberFormat('en-US');

function count(done: number, total?: number): string {
  const of = total !== undefined && total > done ? ` of ${NUMBER.format(total)}` : '';
  return `${NUMBER.format(done)}${of} files`;
}

/**
 * Snapshot progress, shown only once the snapshot has taken `delayMs`
 * (counted from its first report). On
 * a terminal, a single self-overwriting line ("Snapshotting… 12,345 files")
 * redrawn at most every 100 ms. Elsewhere (a log file, a service manager),
 * one plain line every `lineIntervalMs` and a last one with the count, so a
 * long start is visible without flooding the log.
 */
export function progressLine(stream: NodeJS.WriteStream, label = 'Snapshotting…', delayMs = 1000, lineIntervalMs = 5000): ProgressLine {
  // Counted from the first report, so time spent before the snapshot began never shows a line for a quick one.
  let startedAt: number | undefined;
  let last = 0;
  let shown = false;
  let latest = 0;
  if (!stream.isTTY) {
    return {
      update: (done, total) => {
        latest = Math.max(latest, done);
        const now = Date.now();
        startedAt ??= now;
        if (now - startedAt < delayMs || (shown && now - last < lineIntervalMs)) return;
        last = now;
        shown = true;
        stream.write(`${label} ${count(latest, total)}\n`);
      },
      done: () => {
        if (shown) stream.write(`${label} ${count(latest)}, done in ${((Date.now() - (startedAt ?? Date.now())) / 1000).toFixed(1)} s\n`);
        shown = false;
      },
    };
  }
  return {
    update: (done, total) => {
      const now = Date.now();
      startedAt ??= now;
      if (now - startedAt < delayMs || now - last < 100) return;
      last = now;
      shown = true;
      stream.write(`\r\x1b[2K${label} ${count(done, total)}`);
    },
    done: () => {
      if (shown) stream.write('\r\x1b[2K');
      shown = false;
    },
  };
}
