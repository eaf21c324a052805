/**
 * Files an agent presents to the user during a turn (a report, a plan, a
 * generated artefact). They may live outside the working directories; the
 * turn records where they are, and their content is read from there, never
 * copied into the store.
 */
import { constants } from 'node:fs';
import { open, realpath, stat } from 'node:fs/promises';
import { extname } from 'node:path';
import type { PresentedFileEntry } from '../../protocol/extensions/timeline.js';
import type { ResponsePart } from '../../protocol/index.js';
import { fileUri } from '../file-uri.js';
import type { RecordingSession } from './recording-session.js';
import { SessionError } from './session-error.js';
import type { PresentedFile, TurnRecord } from './turn-record.js';

/** Files one `presentFiles` call may name. */
export const MAX_PRESENTED_PER_CALL = 100;
/** Files a turn keeps presented; a path presented again does not count twice. */
const MAX_PRESENTED_PER_TURN = 1000;
/** Longest description, in characters. */
export const MAX_DESCRIPTION_LENGTH = 4096;
/** Largest presented file `resourceRead` serves (1 MiB). */
export const PRESENTED_READ_MAX_BYTES = 1024 * 1024;

/** One file as a harness presents it. */
export interface PresentFileInput {
  /** Absolute, or relative to the session's first working directory. */
  path: string;
  description?: string;
}

/** A presented file that cannot be accepted; `index` is its position in the request. */
export class PresentedFileError extends Error {
  constructor(
    readonly index: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Records files on the active turn, in the session's queue, and shows each
 * in the turn's chat response. Every file is checked before any is
 * recorded: it must exist and be a regular file (after symlinks).
 */
export function presentFiles(session: RecordingSession, turnId: string, files: readonly PresentFileInput[]): Promise<PresentedFile[]> {
  return session.exclusive(async () => {
    if (session.activeTurnId === undefined) throw new SessionError('invalid', `no turn is active in this session (got turnId "${turnId}")`);
    if (session.activeTurnId !== turnId) throw new SessionError('invalid', `turnId "${turnId}" does not match the active turn "${session.activeTurnId}"`);
    const turn = session.turn(turnId)!;
    const resolved: PresentedFile[] = [];
    for (let i = 0; i < files.length; i++) resolved.push(await resolvePresented(session, files[i]!, i));
    const list = (turn.presented ??= []);
    const fresh = resolved.filter((f) => !list.some((p) => p.path === f.path));
    if (list.length + new Set(fresh.map((f) => f.path)).size > MAX_PRESENTED_PER_TURN) {
      throw new SessionError('invalid', `params.files: a turn presents at most ${MAX_PRESENTED_PER_TURN} files (this one has ${list.length})`);
    }
    for (const file of resolved) {
      const known = list.findIndex((p) => p.path === file.path);
      if (known >= 0) {
        // Shown once in the chat; the latest description is what the changeset lists.
        list[known] = file;
        continue;
      }
      list.push(file);
      for (const part of presentedParts(file, list.length)) session.timeline.dispatchChat({ type: 'chat/responsePart', turnId, part });
    }
    return resolved;
  });
}

async function resolvePresented(session: RecordingSession, input: PresentFileInput, index: number): Promise<PresentedFile> {
  const given = session.files.resolvePath(input.path);
  let path: string;
  try {
    path = await realpath(given);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new PresentedFileError(
      index,
      code === 'ENOENT' || code === 'ENOTDIR' ? `${input.path} does not exist` : `${input.path} cannot be resolved (${code ?? (error as Error).message})`,
    );
  }
  const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
    throw new PresentedFileError(index, `${input.path} cannot be read (${error.code ?? error.message})`);
  });
  if (!info.isFile()) throw new PresentedFileError(index, `${input.path} is not a regular file`);
  const file: PresentedFile = {
    path,
    display: session.files.displayOf(path),
    size: info.size,
    at: new Date().toISOString(),
  };
  if (input.description !== undefined) file.description = input.description;
  return file;
}

/** The chat response parts of a presented file: a line naming it, then a reference clients read with `resourceRead`. */
function presentedParts(file: PresentedFile, position: number): ResponsePart[] {
  const uri = fileUri(file.path);
  const label = file.display.replace(/[[\]\\]/g, (c) => `\\${c}`);
  const text = `Presented [${label}](<${uri}>)${file.description ? ` — ${file.description}` : ''}`;
  const type = contentTypeOf(file.path);
  return [
    { kind: 'markdown', id: `presented-${position}`, content: text },
    { kind: 'contentRef', uri, sizeHint: file.size, ...(type ? { contentType: type } : {}) },
  ];
}

/** Every presented file's parts, in order, for a turn read back after a restart. */
export function presentedPartsOf(turn: TurnRecord): ResponsePart[] {
  return (turn.presented ?? []).flatMap((file, i) => presentedParts(file, i + 1));
}

/** The session state's `_meta.turns[turnId].presentedFiles`. */
export function presentedMeta(turn: TurnRecord): PresentedFileEntry[] {
  return (turn.presented ?? []).map((f) => ({
    path: f.display,
    uri: fileUri(f.path),
    ...(f.description !== undefined ? { description: f.description } : {}),
    at: f.at,
  }));
}

/** Why a presented file's content cannot be served. */
export type PresentedReadFailure = 'not-presented' | 'missing' | 'not-a-file' | 'oversized' | 'unreadable';

/** A failed read of presented content, with the reason clients can act on. */
export class PresentedReadError extends Error {
  constructor(
    readonly reason: PresentedReadFailure,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The current content of a presented file. The path is opened without
 * following a final symlink, so a file swapped for a link after it was
 * presented is not read through it.
 */
export async function readPresented(path: string, uri: string, maxBytes = PRESENTED_READ_MAX_BYTES): Promise<Buffer> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new PresentedReadError('missing', `${uri} was presented but no longer exists`);
    if (code === 'ELOOP') throw new PresentedReadError('not-a-file', `${uri} was presented but is now a symbolic link`);
    throw new PresentedReadError('unreadable', `${uri} cannot be read (${code ?? (error as Error).message})`);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new PresentedReadError('not-a-file', `${uri} was presented but is no longer a regular file`);
    if (info.size > maxBytes) {
      throw new PresentedReadError('oversized', `${uri} is ${info.size} bytes, over the ${maxBytes}-byte limit for presented files`);
    }
    const content = await handle.readFile();
    // A file that grew past the limit between the stat and the read is refused too.
    if (content.length > maxBytes) throw new PresentedReadError('oversized', `${uri} is over the ${maxBytes}-byte limit for presented files`);
    return content;
  } finally {
    await handle.close();
  }
}

const CONTENT_TYPES: Record<string, string> = {
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.txt': 'text/plain',
  '.log': 'text/plain',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.pdf': 'application/pdf',
};

function contentTypeOf(path: string): string | undefined {
  return CONTENT_TYPES[extname(path).toLowerCase()];
}
