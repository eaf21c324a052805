/**
 * How a session's review comments are kept in its store: one JSON blob,
 * `refs/changeset-server/sessions/<session>/comments`, replaced as a whole
 * at every change. This module is the format and its check, nothing more:
 * the server reads it back at start and `import` refuses a mirror whose
 * comments are not exactly this shape (a mirror is someone else's data).
 */
import type { CommentAnchor, ReviewComment } from '../../protocol/index.js';
import { MAX_COMMENT_BYTES } from '../../protocol/extensions/comments.js';
import { MAX_ID_LENGTH } from '../../protocol/validate/checks.js';
import { isChangesetUriError, parseChangesetUri } from '../../protocol/changeset/uris.js';

/** Where the anchored lines were read, so they can be found again in later versions of the file. */
export interface CommentTarget {
  /** Index of the session's working directory holding the file; -1 for a file outside them all. */
  root: number;
  /** Path relative to that working directory, `/`-separated. */
  path: string;
  /** Object id (git blob id) of the file version the lines are in. */
  oid: string;
}

/** One comment as stored: the wire comment without what is derived (its session, where its lines are now). */
export interface StoredComment extends Omit<ReviewComment, 'channel' | 'now'> {
  /** For a line comment: where its lines were read. */
  target?: CommentTarget;
}

/** The blob's content. */
export interface StoredComments {
  v: 1;
  /** The number the next comment gets: ids are never reused, even after a delete. */
  next: number;
  /** Oldest first. */
  comments: StoredComment[];
}

/** Most comments a session keeps. */
const MAX_COMMENTS = 10_000;
/** Most bytes of the stored blob (the import refuses a bigger one before parsing it). */
export const MAX_STORED_BYTES = 32 * 1024 * 1024;
/** Most characters of an author's name. */
const MAX_AUTHOR_LENGTH = 200;
/** Most lines one comment may cover. */
const MAX_COMMENT_LINES = 10_000;
/** Longest path, in characters, a comment may name. */
export const MAX_COMMENT_PATH = 4096;

/** An empty list. */
export function emptyComments(): StoredComments {
  return { v: 1, next: 1, comments: [] };
}

/** The blob's bytes. */
export function serializeComments(stored: StoredComments): Buffer {
  return Buffer.from(`${JSON.stringify(stored)}\n`);
}

/** Control characters a terminal would act on (every C0 but tab and line ends, DEL, every C1). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
/** The same, line ends included: names and paths are one line. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
const CONTROL_OR_NEWLINE = /[\u0000-\u001f\u007f-\u009f]/;

/** A comment's text: not blank, at most {@link MAX_COMMENT_BYTES} of UTF-8, no terminal control characters. */
export function bodyProblem(value: unknown, field: string): string | undefined {
  if (typeof value !== 'string' || value.trim().length === 0) return `${field} must be a non-empty text`;
  if (Buffer.byteLength(value, 'utf8') > MAX_COMMENT_BYTES) return `${field} is longer than ${MAX_COMMENT_BYTES} bytes`;
  if (CONTROL.test(value)) return `${field} must not contain control characters`;
  return undefined;
}

/** A one-line name (an author): not blank, at most `max` characters, no control characters. */
export function nameProblem(value: unknown, field: string, max = MAX_AUTHOR_LENGTH): string | undefined {
  if (typeof value !== 'string' || value.trim().length === 0) return `${field} must be a non-empty string`;
  if (value.length > max) return `${field} must be at most ${max} characters`;
  if (CONTROL_OR_NEWLINE.test(value)) return `${field} must not contain control characters`;
  return undefined;
}

/** An anchor: lines of a file in a changeset of `sessionId` (when given), or a turn; `strict` refuses fields no store writes. */
export function anchorProblem(value: unknown, field: string, sessionId?: string, strict = false): string | undefined {
  if (!isRecord(value)) return `${field} must be an object`;
  if (value['kind'] === 'turn') {
    const turnId = value['turnId'];
    if (typeof turnId !== 'string' || turnId.length === 0 || turnId.length > MAX_ID_LENGTH)
      return `${field}.turnId must be a non-empty string of at most ${MAX_ID_LENGTH} characters`;
    return strict ? extraKeys(value, ['kind', 'turnId'], field) : undefined;
  }
  if (value['kind'] !== 'lines') return `${field}.kind must be "lines" or "turn"`;
  const changeset = value['changeset'];
  if (typeof changeset !== 'string' || changeset.length === 0) return `${field}.changeset must be an ahp-changeset: URI`;
  const parsed = parseChangesetUri(changeset);
  if (isChangesetUriError(parsed)) return `${field}.changeset: ${parsed.message}`;
  if (sessionId !== undefined && parsed.sessionId !== sessionId) return `${field}.changeset is a changeset of another session`;
  const pathProblem = nameProblem(value['path'], `${field}.path`, MAX_COMMENT_PATH);
  if (pathProblem) return pathProblem;
  if (value['side'] !== 'before' && value['side'] !== 'after') return `${field}.side must be "before" or "after"`;
  const start = value['startLine'];
  const end = value['endLine'];
  if (!isLine(start)) return `${field}.startLine must be a line number from 1`;
  if (!isLine(end) || end < start) return `${field}.endLine must be a line number from startLine on`;
  if (end - start + 1 > MAX_COMMENT_LINES) return `${field} may cover at most ${MAX_COMMENT_LINES} lines`;
  return strict ? extraKeys(value, ['kind', 'changeset', 'path', 'side', 'startLine', 'endLine'], field) : undefined;
}

/**
 * The first thing wrong with a stored comments blob of session `sessionId`,
 * in words, or undefined when it is exactly what a store writes.
 */
export function storedCommentsProblem(bytes: Uint8Array, sessionId: string): string | undefined {
  if (bytes.length > MAX_STORED_BYTES) return `is larger than ${MAX_STORED_BYTES} bytes`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    return 'is not JSON';
  }
  if (!isRecord(parsed) || parsed['v'] !== 1) return 'is not in a format this version writes';
  const next = parsed['next'];
  const comments = parsed['comments'];
  if (!Number.isSafeInteger(next) || (next as number) < 1) return 'does not say which number the next comment gets';
  if (!Array.isArray(comments) || comments.length > MAX_COMMENTS) return `must hold a list of at most ${MAX_COMMENTS} comments`;
  const ids = new Set<string>();
  for (let i = 0; i < comments.length; i++) {
    const problem = commentProblem(comments[i], `comment ${i + 1}`, sessionId, next as number);
    if (problem) return problem;
    const id = (comments[i] as { id: string }).id;
    if (ids.has(id)) return `has two comments numbered ${id}`;
    ids.add(id);
  }
  return extraKeys(parsed, ['v', 'next', 'comments'], 'the list');
}

/** Parses a blob written by {@link serializeComments}; throws when it is not one. */
export function parseStoredComments(bytes: Uint8Array, sessionId: string): StoredComments {
  const problem = storedCommentsProblem(bytes, sessionId);
  if (problem) throw new Error(`the review comments of session ${sessionId} ${problem}`);
  return JSON.parse(Buffer.from(bytes).toString('utf8')) as StoredComments;
}

function commentProblem(value: unknown, where: string, sessionId: string, next: number): string | undefined {
  if (!isRecord(value)) return `has ${where} that is not an object`;
  const id = value['id'];
  if (typeof id !== 'string' || !/^[1-9]\d{0,15}$/.test(id) || Number(id) >= next) return `has ${where} with an id a store never gives`;
  const named = `comment ${id}`;
  const problem =
    anchorProblem(value['anchor'], 'its anchor', sessionId, true) ??
    bodyProblem(value['body'], 'its text') ??
    nameProblem(value['author'], 'its author') ??
    (value['state'] !== 'open' && value['state'] !== 'resolved' ? 'its state must be open or resolved' : undefined) ??
    (!isTime(value['createdAt']) ? 'its time is not a time' : undefined) ??
    (value['turn'] !== undefined && !isLine(value['turn']) ? 'its turn is not a turn number' : undefined) ??
    resolutionProblem(value['resolution'], value['state']) ??
    lineCommentProblem(value) ??
    extraKeys(value, ['id', 'anchor', 'turn', 'body', 'author', 'createdAt', 'state', 'code', 'resolution', 'target'], 'it');
  return problem ? `has ${named}: ${problem}` : undefined;
}

function resolutionProblem(value: unknown, state: unknown): string | undefined {
  if (value === undefined) return state === 'resolved' ? 'it is resolved without saying by whom' : undefined;
  if (state !== 'resolved') return 'it is open and resolved at once';
  if (!isRecord(value)) return 'its resolution is not an object';
  if (value['by'] !== 'reviewer' && value['by'] !== 'agent') return 'its resolution is by neither the reviewer nor the agent';
  if (!isTime(value['at'])) return "its resolution's time is not a time";
  if (value['note'] !== undefined) {
    const problem = bodyProblem(value['note'], 'its resolution note');
    if (problem) return problem;
  }
  return extraKeys(value, ['by', 'at', 'note'], 'its resolution');
}

function lineCommentProblem(value: Record<string, unknown>): string | undefined {
  const anchor = value['anchor'] as { kind: string; startLine?: number; endLine?: number };
  if (anchor.kind === 'turn') return value['code'] !== undefined || value['target'] !== undefined ? 'a turn comment holds no lines' : undefined;
  const code = value['code'];
  const count = anchor.endLine! - anchor.startLine! + 1;
  if (!Array.isArray(code) || code.length !== count) return `its code must be the ${count} lines it points at`;
  let bytes = 0;
  for (const line of code) {
    if (typeof line !== 'string' || /[\n\r]/.test(line)) return 'its code must be lines of text';
    bytes += line.length;
  }
  if (bytes > MAX_STORED_BYTES) return 'its code is too long';
  const target = value['target'];
  if (!isRecord(target)) return 'it does not say which file version its lines are in';
  const root = target['root'];
  if (!Number.isInteger(root) || (root as number) < -1 || (root as number) > 9999) return 'it names no working directory';
  const path = target['path'];
  if (
    typeof path !== 'string' ||
    path.length > MAX_COMMENT_PATH ||
    path.startsWith('/') ||
    path.split('/').some((c) => c === '' || c === '.' || c === '..') ||
    CONTROL_OR_NEWLINE.test(path)
  ) {
    return 'it names a file outside its working directory';
  }
  if (typeof target['oid'] !== 'string' || !/^[0-9a-f]{40}$/.test(target['oid'])) return 'it names no file version';
  return extraKeys(target, ['root', 'path', 'oid'], 'its file');
}

function extraKeys(value: Record<string, unknown>, allowed: readonly string[], field: string): string | undefined {
  const extra = Object.keys(value).find((k) => !allowed.includes(k));
  return extra === undefined ? undefined : `${field} has a field no store writes (${JSON.stringify(extra.slice(0, 40))})`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isLine(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
}

function isTime(value: unknown): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** The anchor as stored (only its own fields, whatever the caller sent besides). */
export function cleanAnchor(anchor: CommentAnchor): CommentAnchor {
  return anchor.kind === 'turn'
    ? { kind: 'turn', turnId: anchor.turnId }
    : { kind: 'lines', changeset: anchor.changeset, path: anchor.path, side: anchor.side, startLine: anchor.startLine, endLine: anchor.endLine };
}
