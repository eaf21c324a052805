/**
 * The content `resourceRead` serves for a presented file. Inside the
 * working directories it is read the way every workspace read is (no
 * symlink swapped in can lead it outside); outside them only when the
 * server was started to allow it, since a path an agent names can be any
 * file the user can read.
 */
import { readContained } from '../disk/contained-read.js';
import { PRESENTED_READ_MAX_BYTES, PresentedReadError as SessionPresentedReadError, readPresented } from '../session/presented-files.js';
import type { RecordingSession } from '../session/recording-session.js';
import type { PresentedFile } from '../session/turn-record.js';

/** How presented files are served. */
export interface PresentedReadOptions {
  /** Serve the content of presented files outside the working directories (`serve --serve-outside-files`). */
  serveOutsideFiles?: boolean;
}

/** Why a presented file's content is not served. */
export type PresentedReadFailure = 'missing' | 'not-a-file' | 'oversized' | 'unreadable' | 'outside' | 'left-working-directory';

/** A refused read, with the reason clients can act on: a containment refusal (`outside`, `left-working-directory`) answers PermissionDenied, the others ContentNotFound. */
export class PresentedReadError extends Error {
  constructor(
    readonly reason: PresentedReadFailure,
    message: string,
  ) {
    super(message);
  }

  get isContainment(): boolean {
    return this.reason === 'outside' || this.reason === 'left-working-directory';
  }
}

/** The current content of a presented file, or a {@link PresentedReadError} saying why not. */
export async function readPresentedContent(
  session: RecordingSession,
  file: PresentedFile,
  opts: PresentedReadOptions,
  maxBytes = PRESENTED_READ_MAX_BYTES,
): Promise<Buffer> {
  const name = file.display;
  if (session.files.rootIndexOf(file.path) < 0) {
    if (!opts.serveOutsideFiles) {
      throw new PresentedReadError(
        'outside',
        `${name} lies outside the working directories; its content is shown only when the server is started with --serve-outside-files`,
      );
    }
    try {
      return await readPresented(file.path, name, maxBytes);
    } catch (error) {
      if (error instanceof SessionPresentedReadError) throw new PresentedReadError(error.reason === 'not-presented' ? 'missing' : error.reason, error.message);
      throw error;
    }
  }
  const found = await readContained(session.workingDirectories, file.path, maxBytes).catch((error: NodeJS.ErrnoException) => {
    throw new PresentedReadError(
      'unreadable',
      `${name} cannot be read (${error.code === 'EACCES' || error.code === 'EPERM' ? 'permission denied' : error.message})`,
    );
  });
  switch (found.kind) {
    case 'file':
      return found.content;
    case 'missing':
      throw new PresentedReadError('missing', `${name} was presented but no longer exists`);
    case 'symlink':
      throw new PresentedReadError('not-a-file', `${name} was presented but is now a symbolic link`);
    case 'not-a-file':
      throw new PresentedReadError('not-a-file', `${name} was presented but is no longer a regular file`);
    case 'oversized':
      throw new PresentedReadError('oversized', `${name} is ${found.stat.size} bytes, over the ${maxBytes}-byte limit for presented files`);
    case 'left-working-directory':
      throw new PresentedReadError(
        'left-working-directory',
        `${name} was presented but now leads outside the working directories (a folder on its way links elsewhere); it is not read`,
      );
  }
}
