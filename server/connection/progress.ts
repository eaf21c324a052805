import { ROOT_CHANNEL, type ProgressParams } from '../../protocol/index.js';

/** Reports one operation's progress as `root/progress` frames carrying the client's token. */
export interface ProgressReporter {
  /** Work done so far and, when known, the total. */
  update(done: number, total?: number): void;
  /** Sends the final frame (`progress === total`) when anything was reported; nothing refers to the token afterwards. */
  finish(): void;
}

/**
 * A reporter that keeps AHP's rules for a token: `progress` never goes
 * back, a `total` is sent only while still ahead of it (one the count has
 * reached would announce completion while work goes on), and exactly one
 * final frame has `progress === total`.
 */
export function progressReporter(
  send: (params: ProgressParams) => void,
  progressToken: string,
  describe?: (progress: number, total?: number) => string,
): ProgressReporter {
  let progress = 0;
  let reported = false;
  let finished = false;
  const frame = (total: number | undefined): ProgressParams => {
    const message = describe?.(progress, total);
    return {
      channel: ROOT_CHANNEL,
      progressToken,
      progress,
      ...(total !== undefined ? { total } : {}),
      ...(message !== undefined ? { message } : {}),
    };
  };
  return {
    update(done, total) {
      if (finished || !Number.isFinite(done) || done < 0) return;
      reported = true;
      progress = Math.max(progress, done);
      const ahead = total !== undefined && total > progress ? total : undefined;
      // The walk of one directory ends with done === total: the final frame says so once everything is done.
      if (ahead === undefined && total === done) return;
      send(frame(ahead));
    },
    finish() {
      if (finished || !reported) return;
      finished = true;
      send(frame(progress));
    },
  };
}
