import { compareDisplay } from './display-path.js';

/** One file changed during a turn, with its line counts. */
export interface ChangedFileSummary {
  /** Path relative to the session's working directory, or absolute when outside it. */
  path: string;
  /** Sort key and label (see `displayPath`): always `/`-separated. */
  display: string;
  /** Lines added; zero for binary and oversized files. */
  added: number;
  /** Lines deleted; zero for binary and oversized files. */
  deleted: number;
  /** Present when either side of the file is binary. */
  binary?: true;
  /** Present when the file is larger than the size limit; its lines are not counted. */
  oversized?: true;
}

/** The files a turn changed, in the shape of a workspace-changes summary. */
export interface TurnSummary {
  /** The turn whose changes this summary describes. */
  turn: string;
  /** The working directory `path` values are relative to. */
  cwd: string;
  /** Changed files in `display` order, capped at `maxFiles`. */
  files: ChangedFileSummary[];
  /** Complete changed-file count, including files left out by the cap. */
  total: number;
  /** Lines added over every changed file, including files left out by the cap. */
  added: number;
  /** Lines deleted over every changed file, including files left out by the cap. */
  deleted: number;
  /** Tree ids of the turn-start and turn-end snapshots; absent when no snapshot was taken. */
  snapshot?: { before: string; after: string };
}

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
