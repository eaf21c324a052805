/**
 * Anchoring line comments: reading the lines a comment points at when it is
 * written (the side of a file in a changeset), and finding them again in
 * the file's current version — the working tree as the session last
 * recorded it. Lines move when later changes insert or remove lines above
 * them (a line diff maps them); when they are gone or rewritten the comment
 * is outdated (`now: null`), as GitHub marks it.
 */
import { join } from 'node:path';
import type { ChangesetFileMeta, CommentPosition, LinesAnchor, ParsedChangesetUri } from '../../protocol/index.js';
import { isChangesetUriError, parseChangesetUri } from '../../protocol/changeset/uris.js';
import { diffLines } from '../../diff/line-diff.js';
import { splitLines } from '../../diff/lines.js';
import type { Changesets } from '../changesets/changesets.js';
import type { RootTrees } from '../changes/collect-changes.js';
import { lookupPath } from '../changes/tree-lookup.js';
import { isBinary } from '../diff/binary.js';
import { invalidParams, notFound } from '../domain-error.js';
import type { RecordingSession } from '../session/recording-session.js';
import type { CommentTarget } from './stored.js';

/** What a new line comment keeps of its lines. */
interface AnchoredLines {
  target: CommentTarget;
  /** The lines, without line ends. */
  code: string[];
  /** The number of the turn whose changeset it is on, if it is a turn's. */
  turn?: number;
}

/**
 * Reads the lines `anchor` names; throws a `DomainError` naming what is
 * wrong (no such changeset, turn or file in it, lines outside the side).
 */
export async function anchorLines(changesets: Changesets, session: RecordingSession, anchor: LinesAnchor): Promise<AnchoredLines> {
  const parsed = parseChangesetUri(anchor.changeset);
  if (isChangesetUriError(parsed)) throw invalidParams(`params.anchor.changeset: ${parsed.message}`);
  if (parsed.sessionId !== session.id) throw invalidParams('params.anchor.changeset is a changeset of another session');
  const { channel } = await changesets.channel(anchor.changeset);
  const where = changesetWords(session, parsed);
  const file = [...channel.files.values()].find((f) => (f._meta as ChangesetFileMeta | undefined)?.path === anchor.path);
  const change = file && channel.changes.get(file.id);
  if (!change) throw notFound(`${anchor.path} is not among the files ${where} changed`);
  const side = anchor.side === 'after' ? change.after : change.before;
  if (!side) throw invalidParams(`${anchor.path} has no ${anchor.side === 'after' ? 'new version' : 'old version'} in ${where}: it was ${change.kind}`);
  if (side.oversized || side.mode === '160000')
    throw invalidParams(`${anchor.path} in ${where} has no lines to comment on (${side.oversized ? 'too large' : 'a nested repository'})`);
  const content = (await side.store.readObject(side.oid)).content;
  if (isBinary(content)) throw invalidParams(`${anchor.path} in ${where} is binary: it has no lines to comment on`);
  const lines = textLines(content);
  if (anchor.endLine > lines.length) {
    const range = anchor.startLine === anchor.endLine ? `line ${anchor.startLine} is` : `lines ${anchor.startLine}–${anchor.endLine} are`;
    const count = lines.length === 1 ? '1 line' : `${lines.length} lines`;
    throw invalidParams(`${anchor.path} has ${count} ${anchor.side === 'after' ? 'after' : 'before'} ${where}, so ${range} outside it`);
  }
  const path = anchor.side === 'before' ? (change.oldPath ?? change.path) : change.path;
  const turn = turnNumberOf(session, parsed);
  return {
    target: { root: change.captured ? -1 : change.root, path, oid: side.oid },
    code: lines.slice(anchor.startLine - 1, anchor.endLine),
    ...(turn !== undefined ? { turn } : {}),
  };
}

/** The number of the turn a changeset belongs to (a turn's, a step's, since a checkpoint, the newer of two compared). */
function turnNumberOf(session: RecordingSession, parsed: ParsedChangesetUri): number | undefined {
  const turnId = parsed.kind === 'compare-turns' ? parsed.modifiedTurnId : parsed.turnId;
  return turnId === undefined ? undefined : session.turn(turnId)?.index;
}

/** "turn 3", "the session's changes"…: the changeset as a person names it. */
function changesetWords(session: RecordingSession, parsed: ParsedChangesetUri): string {
  const turn = turnNumberOf(session, parsed);
  switch (parsed.kind) {
    case 'turn':
      return `turn ${turn}`;
    case 'step':
      return `step ${parsed.step} of turn ${turn}`;
    case 'since':
      return `the changes since turn ${turn}${parsed.step === undefined ? ' started' : ` step ${parsed.step}`}`;
    case 'compare-turns':
      return `the comparison with turn ${turn}`;
    case 'uncommitted':
      return 'the uncommitted changes';
    case 'branch':
      return "the branch's changes";
    default:
      return "the session's changes";
  }
}

/** The lines of a text file without their line ends. */
function textLines(content: Uint8Array): string[] {
  return splitLines(Buffer.from(content).toString('utf8')).map((l) => l.replace(/\r?\n$/, ''));
}

/** The file's current version: the working tree as the session last recorded it (a turn's end, or what an operation left). */
function currentTrees(session: RecordingSession): readonly RootTrees[] {
  return session.baselineTrees ?? [...session.turns].reverse().find((t) => t.after !== undefined)?.after ?? session.startTrees;
}

/** The file a comment's lines are in now: its path (a later turn may have renamed it) and its blob id there, undefined when it is gone. */
interface CurrentFile {
  path: string;
  oid: string | undefined;
}

/** The comment's file in the current version, following the renames recorded turns made when it is no longer at its path. */
export async function currentFile(session: RecordingSession, target: CommentTarget): Promise<CurrentFile> {
  const here = await oidAt(session, target.root, target.path);
  if (here !== undefined) return { path: target.path, oid: here };
  let path = target.path;
  for (const turn of session.turns) {
    if (turn.after === undefined) continue;
    const renamed = (await session.turnChanges(turn)).find((c) => c.kind === 'renamed' && c.root === target.root && c.oldPath === path);
    if (renamed) path = renamed.path;
  }
  return { path, oid: path === target.path ? undefined : await oidAt(session, target.root, path) };
}

/** The blob id at a path of the current version, or undefined when there is no file there. */
async function oidAt(session: RecordingSession, root: number, path: string): Promise<string | undefined> {
  if (root < 0 || root >= session.files.count) return undefined;
  const trees = currentTrees(session)[root];
  if (!trees) return undefined;
  const reader = session.files.source(root).reader;
  // A file in a nested repository is in that repository's tree.
  const nested = trees.nested.filter((n) => path.startsWith(`${n.path}/`)).sort((a, b) => b.path.length - a.path.length)[0];
  const found = nested ? await lookupPath(reader, nested.tree, path.slice(nested.path.length + 1)) : await lookupPath(reader, trees.tree, path);
  return found && (found.mode === '100644' || found.mode === '100755') ? found.oid : undefined;
}

/**
 * Where the comment's lines are in the file's current version `now`, or
 * null when they were removed or rewritten. `startLine`/`endLine` are
 * where they were in the version `target.oid`; `code` is those lines.
 */
export async function locateLines(
  session: RecordingSession,
  target: CommentTarget,
  range: { startLine: number; endLine: number },
  code: readonly string[],
  now: CurrentFile,
): Promise<CommentPosition | null> {
  if (now.oid === undefined) return null;
  const path = session.files.display({ absPath: join(session.files.root(target.root).dir, now.path), root: target.root, path: now.path });
  if (now.oid === target.oid) return { path, startLine: range.startLine, endLine: range.endLine };
  const store = session.files.source(target.root).store;
  const content = (await store.readObject(now.oid)).content;
  if (isBinary(content)) return null;
  const nowLines = textLines(content);
  const then = await store.readObject(target.oid).then(
    (o) => textLines(o.content),
    () => undefined,
  );
  const moved = then ? mapRange(then, nowLines, range) : findLines(nowLines, code, range.startLine);
  return moved ? { path, ...moved } : null;
}

/** Maps a range of `a`'s lines (from 1, inclusive) into `b` through the line diff; undefined when a change touches it. */
function mapRange(
  a: readonly string[],
  b: readonly string[],
  range: { startLine: number; endLine: number },
): { startLine: number; endLine: number } | undefined {
  const start = range.startLine - 1;
  const end = range.endLine; // exclusive, 0-based
  let shift = 0;
  for (const c of diffLines(a, b)) {
    if (c.oldEnd <= start) {
      // Entirely before the range (an insertion right above its first line included).
      shift += c.newEnd - c.newStart - (c.oldEnd - c.oldStart);
      continue;
    }
    if (c.oldStart >= end) break;
    // Removes or rewrites a line of the range, or inserts lines inside it.
    return undefined;
  }
  return { startLine: range.startLine + shift, endLine: range.endLine + shift };
}

/** The place in `lines` holding exactly `code`, nearest to `near` (from 1); undefined when there is none. */
function findLines(lines: readonly string[], code: readonly string[], near: number): { startLine: number; endLine: number } | undefined {
  let best: number | undefined;
  for (let i = 0; i + code.length <= lines.length; i++) {
    let same = true;
    for (let j = 0; j < code.length && same; j++) same = lines[i + j] === code[j];
    if (same && (best === undefined || Math.abs(i + 1 - near) < Math.abs(best + 1 - near))) best = i;
  }
  return best === undefined ? undefined : { startLine: best + 1, endLine: best + code.length };
}
