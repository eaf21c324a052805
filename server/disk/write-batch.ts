import { unlink } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { encodePathBytes } from '../path-bytes.js';
import type { ContainedDirs, PinnedDir } from './contained-dirs.js';
import {
  changedSince,
  ChangedWhileRunningError,
  releaseReplaced,
  replaceFile,
  undoReplacement,
  type ExpectedVersion,
  type NewVersion,
  type Replacement,
  type SwapNames,
  type Taken,
} from './file-swap.js';
import { describeWriter, fileKey, findOpenWriters, type OpenWriter } from './open-writers.js';

/** One file an operation writes. */
export interface BatchWrite {
  absPath: string;
  /** The file as people name it. */
  display: string;
  names: SwapNames;
  expected: ExpectedVersion;
  next: NewVersion;
}

/** Thrown when another process holds a file the operation replaced open for writing. */
export class HeldOpenError extends Error {
  constructor(
    readonly absPath: string,
    readonly writer: OpenWriter,
  ) {
    super(`${absPath} is ${describeWriter(writer)}`);
  }
}

/** What a rollback could not do. */
export interface RollBackResult {
  /** Files not put back: edited again since (the safety checkpoint has the version before the operation). */
  failed: string[];
  /** Versions kept beside a file under a temporary name, because something was written to them. */
  kept: string[];
}

interface Written {
  write: BatchWrite;
  /** The directory written through, held open: a rollback goes through it too. */
  dir: PinnedDir;
  name: Buffer;
  done: Replacement;
}

/**
 * The files of one operation, written one by one, each version replaced
 * kept until the last is written: then ({@link settle}) none may have been
 * written to since it was checked, and no other process may still hold one
 * open for writing — its later writes would land in a file no name leads
 * to. Otherwise everything is put back, each version replaced as it is now
 * (with whatever was written to it), through the directory it was written in.
 */
export class WriteBatch {
  private readonly written: Written[] = [];

  constructor(private readonly dirs: ContainedDirs) {}

  /** Files written so far. */
  get count(): number {
    return this.written.length;
  }

  /** Writes one file; when it throws, nothing of that file was written. */
  async write(w: BatchWrite): Promise<void> {
    const dir = await this.dirs.parentOf(w.absPath, w.next !== undefined, true);
    const name = encodePathBytes(basename(w.absPath));
    const done = await replaceFile(dir, name, w.names, w.expected, w.next);
    this.written.push({ write: w, dir, name, done });
  }

  /** After the last write: throws (HeldOpenError, ChangedWhileRunningError) for the first version replaced that is not as checked or is still held open for writing. */
  async settle(): Promise<void> {
    const replaced = this.written.filter((x) => x.done.replaced);
    const writers = await findOpenWriters(replaced.map((x) => x.done.replaced!.identity));
    for (const x of replaced) {
      const writer = writers.get(fileKey(x.done.replaced!.identity));
      if (writer) throw new HeldOpenError(x.write.absPath, writer);
      const reason = await changedSince(x.dir, x.write.names.aside, x.done.replaced!);
      if (reason) throw new ChangedWhileRunningError(x.write.absPath, reason);
    }
  }

  /** Removes the versions replaced, once settled. */
  async release(): Promise<void> {
    for (const x of this.written) if (x.done.replaced) await releaseReplaced(x.dir, x.write.names);
  }

  /** Puts back, newest first, every file written, each only if it still holds what was written, and removes directories made. */
  async rollBack(): Promise<RollBackResult> {
    const failed: string[] = [];
    const kept: string[] = [];
    const taken: { x: Written; taken: Taken }[] = [];
    const putBack: Written[] = [];
    for (const x of [...this.written].reverse()) {
      try {
        const t = await undoReplacement(x.dir, x.name, x.write.names, x.done);
        if (t) taken.push({ x, taken: t });
        putBack.push(x);
      } catch {
        failed.push(x.write.display);
        // The version before stays only when something was written to it: as checked, the safety checkpoint holds it.
        if (x.done.replaced && (await changedSince(x.dir, x.write.names.aside, x.done.replaced))) kept.push(tempLabel(x, x.write.names.aside));
        else if (x.done.replaced) await releaseReplaced(x.dir, x.write.names);
      }
    }
    // Our versions taken off the names go once nothing writes to them; the second names of those put back only after that, so a restart in between can tell ours from someone's.
    const writers = await findOpenWriters(taken.map((t) => t.taken.version.identity));
    for (const { x, taken: t } of taken) {
      if (writers.has(fileKey(t.version.identity)) || (await changedSince(x.dir, t.name, t.version))) kept.push(tempLabel(x, t.name));
      else await unlink(x.dir.entry(Buffer.from(t.name)));
    }
    for (const x of putBack) if (x.done.replaced) await releaseReplaced(x.dir, x.write.names);
    await this.dirs.removeCreated();
    return { failed, kept };
  }
}

function tempLabel(x: Written, name: string): string {
  const dir = dirname(x.write.display);
  return dir === '.' ? name : `${dir}/${name}`;
}
