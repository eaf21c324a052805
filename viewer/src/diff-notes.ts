/**
 * What a file's diff area says instead of lines, in the one-file view and
 * on the review page alike.
 */
import type { BinaryFileDiff, OversizedFileDiff } from '../../protocol/extensions/file-diff.js';

/** For a diff that has no text to show (binary, or over the size limit), the sentence saying so. */
export function noTextNote(diff: BinaryFileDiff | OversizedFileDiff): string {
  if (diff.kind === 'binary') return `Binary file${sizes(diff.beforeSize, diff.afterSize)} — no text diff.`;
  return `File too large to diff${sizes(diff.beforeSize, diff.afterSize)}; the limit is ${bytes(diff.limit)}.`;
}

/**
 * For a file with a filter driver git runs and the server does not
 * (`_meta.filterNotRun`): why its content is the file as saved rather than
 * what git would store.
 */
export function filterNote(driver: string | undefined): string | undefined {
  if (driver === undefined) return undefined;
  return `git runs the “${driver}” filter on this file; this server does not, so it is shown as saved.`;
}

/** For a text diff without hunks. */
export const NO_LINE_CHANGES = 'No line changes (only the name, mode or file type changed).';

function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

function sizes(before: number | undefined, after: number | undefined): string {
  if (before !== undefined && after !== undefined) return ` (${bytes(before)} → ${bytes(after)})`;
  if (after !== undefined) return ` (${bytes(after)})`;
  if (before !== undefined) return ` (${bytes(before)})`;
  return '';
}
