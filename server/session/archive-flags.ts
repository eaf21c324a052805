/**
 * The archived flag of each session, kept across restarts: the last
 * `session/isArchivedChanged` the session's state took, whether the server
 * dispatched it (a session ends, or resumes) or a client did (AHP lets
 * clients archive and unarchive a session). One small file per session in
 * the state directory, written atomically; a session opened again takes the
 * flag it had.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { MAX_NAME_BYTES } from '../../protocol/validate/checks.js';
import { writeFileAtomic } from '../private-files.js';

export class ArchiveFlags {
  private readonly dir: string;
  /** Writes in order, per session, so the last flag set is the one on disk. */
  private readonly writing = new Map<string, Promise<void>>();

  constructor(stateDir: string) {
    this.dir = join(stateDir, 'archived');
  }

  /** The flag last stored for a session, or undefined when none was. */
  get(sessionId: string): boolean | undefined {
    try {
      const parsed: unknown = JSON.parse(readFileSync(this.pathOf(sessionId), 'utf8'));
      const value = (parsed as { isArchived?: unknown } | null)?.isArchived;
      return typeof value === 'boolean' ? value : undefined;
    } catch {
      return undefined;
    }
  }

  /** Stores a session's flag. */
  set(sessionId: string, isArchived: boolean): Promise<void> {
    return this.queue(sessionId, () => writeFileAtomic(this.pathOf(sessionId), JSON.stringify({ isArchived }), this.dir));
  }

  /** Forgets a session's flag (the session was removed). */
  remove(sessionId: string): Promise<void> {
    return this.queue(sessionId, () => rm(this.pathOf(sessionId), { force: true }));
  }

  /** Resolves once every write issued so far is done. */
  async flushed(): Promise<void> {
    await Promise.allSettled([...this.writing.values()]);
  }

  private queue(sessionId: string, task: () => Promise<void>): Promise<void> {
    const next = (this.writing.get(sessionId) ?? Promise.resolve()).then(task).catch(() => undefined);
    this.writing.set(sessionId, next);
    void next.then(() => {
      if (this.writing.get(sessionId) === next) this.writing.delete(sessionId);
    });
    return next;
  }

  /** The session's file name: its id percent-encoded, or for ids too long for a file name, a prefix plus a hash. */
  private pathOf(sessionId: string): string {
    const encoded = encodeURIComponent(sessionId);
    const name =
      encoded.length + '.json'.length <= MAX_NAME_BYTES
        ? `${encoded}.json`
        : `${encoded.slice(0, 160)}--${createHash('sha256').update(sessionId, 'utf8').digest('hex').slice(0, 16)}.json`;
    return join(this.dir, name);
  }
}
