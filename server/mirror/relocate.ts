/**
 * Checkpoints name the directories they recorded (the session's working
 * directories, each root's path, captured and restored files' absolute
 * paths). Imported on another machine, the same project sits elsewhere:
 * these rewrite every such path from the mirrored directory to the local
 * one, in checkpoint trailers and in JSON blobs, leaving all else as it was.
 */
import { basename } from 'node:path';
import { TRAILER_KEY } from '../store/checkpoint-format.js';
import type { CommitObject } from '../store/commit.js';
import { SESSION_START_REASON } from '../session/session-journal.js';

/** A directory move: paths equal to `from` or under it are moved under `to`. */
export interface Relocation {
  from: string;
  to: string;
}

/** Rewrites every string in a JSON value that is the directory or a path inside it. */
export function relocateJson(value: unknown, move: Relocation): unknown {
  if (typeof value === 'string') {
    if (value === move.from) return move.to;
    return value.startsWith(`${move.from}/`) ? `${move.to}${value.slice(move.from.length)}` : value;
  }
  if (Array.isArray(value)) return value.map((v) => relocateJson(v, move));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = relocateJson(v, move);
    return out;
  }
  return value;
}

/**
 * A checkpoint message with its trailer relocated; `entries` (the id of the
 * change-entries blob) is replaced through `blobIds` when that blob was
 * rewritten too. Returns the message unchanged when nothing moved.
 */
function relocateMessage(message: string, move: Relocation, blobIds: ReadonlyMap<string, string>): string {
  const lines = message.split('\n');
  const at = lines.map((l) => l.startsWith(`${TRAILER_KEY}: `)).lastIndexOf(true);
  if (at < 0) return message;
  const trailer = JSON.parse(lines[at]!.slice(TRAILER_KEY.length + 2)) as Record<string, unknown>;
  const moved = relocateJson(trailer, move) as Record<string, unknown>;
  const entries = moved['entries'];
  if (typeof entries === 'string' && blobIds.has(entries)) moved['entries'] = blobIds.get(entries);
  lines[at] = `${TRAILER_KEY}: ${JSON.stringify(moved)}`;
  return lines.join('\n');
}

/**
 * A checkpoint message as the importing machine keeps it: relocated (see
 * {@link relocateMessage}), and wherever it says which directory the session
 * works in — the session start's working directories, the root it
 * snapshots — that is the local directory, whatever the mirror wrote: a
 * directory the remote names is never one a server opens or records.
 * The session start keeps the name of the folder it was recorded in
 * (`recordedIn`, when it differs from the local one) for the session's
 * title: the import is titled as the original was. Returns the message
 * unchanged when nothing needed changing, so a session imported into the
 * directory it was recorded in keeps its checkpoint ids.
 */
export function localizeMessage(message: string, move: Relocation, blobIds: ReadonlyMap<string, string>): string {
  const relocated = move.from === move.to ? message : relocateMessage(message, move, blobIds);
  const lines = relocated.split('\n');
  const at = lines.map((l) => l.startsWith(`${TRAILER_KEY}: `)).lastIndexOf(true);
  if (at < 0) return relocated;
  const trailer = JSON.parse(lines[at]!.slice(TRAILER_KEY.length + 2)) as {
    kind?: unknown;
    reason?: unknown;
    details?: { workingDirectories?: unknown; recordedIn?: unknown } | null;
    roots?: { name?: unknown; path?: unknown }[];
  };
  let changed = false;
  if (trailer.kind === 'safety' && trailer.reason === SESSION_START_REASON && trailer.details && typeof trailer.details === 'object') {
    const named = trailer.details.workingDirectories;
    if (!Array.isArray(named) || named.length !== 1 || named[0] !== move.to) {
      trailer.details.workingDirectories = [move.to];
      changed = true;
    }
    // The session is titled as it was where it was recorded ("ws1 — 2026-12-01 12:30"), not after the local folder.
    // Only the folder's name is kept: a directory the remote names is never one a server opens.
    const recordedIn = basename(move.from);
    if (move.from !== move.to && recordedIn !== basename(move.to) && trailer.details.recordedIn !== recordedIn) {
      trailer.details.recordedIn = recordedIn;
      changed = true;
    } else if (trailer.details.recordedIn !== undefined && recordedIn === basename(move.to)) {
      delete trailer.details.recordedIn;
      changed = true;
    }
  }
  for (const root of Array.isArray(trailer.roots) ? trailer.roots : []) {
    if (root?.name === 'workspace' && root.path !== undefined && root.path !== move.to) {
      root.path = move.to;
      changed = true;
    }
  }
  if (!changed) return relocated;
  lines[at] = `${TRAILER_KEY}: ${JSON.stringify(trailer)}`;
  return lines.join('\n');
}

/** The content of a commit with other parents and message, keeping its tree, author and committer lines. */
export function serializeCommitLike(commit: CommitObject, parents: readonly string[], message: string): Buffer {
  const lines = [`tree ${commit.tree}`, ...parents.map((p) => `parent ${p}`), `author ${commit.author}`, `committer ${commit.committer}`];
  return Buffer.from(`${lines.join('\n')}\n\n${message}`, 'utf8');
}
