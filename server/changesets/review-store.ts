import { createHash } from 'node:crypto';
import { chmodSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_NAME_BYTES } from '../../protocol/validate/checks.js';
import { isNotFound, mkdirPrivateSync, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, writeFileAtomic } from '../private-files.js';

/**
 * Review flags that survive restarts: for each changeset URI and file id,
 * the content the reviewer saw when they ticked it. A flag only applies while
 * the file's content is still that content, so a changed file comes back
 * unreviewed; the content it was ticked at stays, for "changed since you
 * viewed" and its diff, until the file is ticked again or unticked.
 */
export class ReviewStore {
  private readonly path: string;
  private readonly tmpDir: string;
  private data: Record<string, Record<string, string>>;
  private writing: Promise<void> = Promise.resolve();

  constructor(stateDir: string, sessionId: string) {
    const dir = join(stateDir, 'reviews');
    mkdirPrivateSync(dir);
    this.tmpDir = dir;
    this.path = join(dir, reviewFileName(sessionId));
    // Flags written by an earlier version may be readable by others.
    chmodSync(dir, PRIVATE_DIR_MODE);
    try {
      chmodSync(this.path, PRIVATE_FILE_MODE);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    this.data = load(this.path);
  }

  /** Resolves when every write issued so far is on disk. */
  flushed(): Promise<void> {
    return this.writing;
  }

  /** True when the file was reviewed at exactly this content. */
  isReviewed(changeset: string, fileId: string, contentKey: string): boolean {
    return this.data[changeset]?.[fileId] === contentKey;
  }

  /** The content the file was ticked at (its content key), or undefined when it is not ticked in this changeset. */
  viewedAt(changeset: string, fileId: string): string | undefined {
    return this.data[changeset]?.[fileId];
  }

  /** Records (or clears) review of files at their current content, and persists. */
  set(changeset: string, files: readonly { id: string; contentKey: string }[], reviewed: boolean): Promise<void> {
    const entry = (this.data[changeset] ??= {});
    for (const f of files) {
      if (reviewed) entry[f.id] = f.contentKey;
      else delete entry[f.id];
    }
    if (Object.keys(entry).length === 0) delete this.data[changeset];
    const text = JSON.stringify(this.data);
    this.writing = this.writing.then(() => writeFileAtomic(this.path, text, this.tmpDir)).catch(() => undefined);
    return this.writing;
  }
}

/**
 * The session's file name: its id percent-encoded, or for ids too long for a
 * file name, a prefix of it plus a hash of the whole id.
 */
function reviewFileName(sessionId: string): string {
  const encoded = encodeURIComponent(sessionId);
  if (encoded.length + '.json'.length <= MAX_NAME_BYTES) return `${encoded}.json`;
  return `${encoded.slice(0, 160)}--${createHash('sha256').update(sessionId, 'utf8').digest('hex').slice(0, 16)}.json`;
}

function load(path: string): Record<string, Record<string, string>> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, Record<string, string>>) : {};
  } catch {
    return {};
  }
}
