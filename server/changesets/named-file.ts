import { relative } from 'node:path';
import { invalidParams } from '../domain-error.js';
import { pathOfFileUri } from '../file-uri.js';
import { toSlashes } from '../paths.js';
import type { RecordingSession } from '../session/recording-session.js';

/** A file of a session's working directories, as a client named it. */
export interface NamedFile {
  /** Its absolute path. */
  absPath: string;
  /** The index of the working directory holding it. */
  root: number;
  /** Its path in that working directory, with forward slashes. */
  rel: string;
}

/**
 * The file a client named — a `file:` URI, an absolute path, or a path
 * relative to the session's first working directory — refused unless it is
 * inside one of the session's working directories.
 */
export function namedFile(session: RecordingSession, path: string): NamedFile {
  let absPath: string;
  if (path.startsWith('file:')) {
    const named = pathOfFileUri(path);
    if (named === undefined) throw invalidParams(`path: ${path} is not a local file URI`);
    absPath = named;
  } else {
    absPath = session.files.resolvePath(path);
  }
  const root = session.files.rootIndexOf(absPath);
  if (root < 0) throw invalidParams(`path: ${path} is outside the session's working directories`);
  return { absPath, root, rel: toSlashes(relative(session.files.root(root).dir, absPath)) };
}
