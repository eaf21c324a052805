import type { ChangedFileSummary, TurnSummary } from '../../protocol/index.js';
import { compareDisplay } from './display-path.js';

// What `harness/turnEnded` answers with: wire types.
export type { ChangedFileSummary, TurnSummary } from '../../protocol/index.js';

export interface SummaryOptions {
  turn: string;
  cwd: string;
  /** Most files listed; the totals still count every file. Default 500. */
  maxFiles?: number;
  snapshot?: { before: string; after: string };
}

export const DEFAULT_MAX_FILES = 500;

/** Sorts, caps and totals the changed files of one turn. */
export function summarizeTurn(files: readonly ChangedFileSummary[], opts: SummaryOptions): TurnSummary {
  const sorted = [...files].sort((a, b) => compareDisplay(a.display, b.display));
  let added = 0;
  let deleted = 0;
  for (const f of sorted) {
    added += f.added;
    deleted += f.deleted;
  }
  const summary: TurnSummary = {
    turn: opts.turn,
    cwd: opts.cwd,
    files: sorted.slice(0, opts.maxFiles ?? DEFAULT_MAX_FILES),
    total: sorted.length,
    added,
    deleted,
  };
  if (opts.snapshot) summary.snapshot = opts.snapshot;
  return summary;
}

/**
 * The summary as Markdown, the turn's response part in the chat: what any
 * AHP client shows for a recorded turn. Lists at most `limit` files.
 */
export function summaryMarkdown(summary: TurnSummary, limit = 20): string {
  if (summary.total === 0) return 'No files changed.';
  const head = `Changed ${summary.total} file${summary.total === 1 ? '' : 's'} (+${summary.added} −${summary.deleted}):`;
  const lines = summary.files.slice(0, limit).map((f) => {
    const counts = f.binary ? 'binary' : f.oversized ? 'too large to count' : `+${f.added} −${f.deleted}`;
    return `- \`${f.display.replace(/`/g, "'")}\` ${counts}`;
  });
  const more = summary.total - lines.length;
  if (more > 0) lines.push(`- … and ${more} more`);
  return [head, ...lines].join('\n');
}
