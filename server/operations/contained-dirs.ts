import { constants, existsSync } from 'node:fs';
import { lstat, mkdir, open, realpath, type FileHandle } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { decodePathBytes, encodePathBytes, fsPath } from '../path-bytes.js';
import { isInsideDir, relativeInside } from '../paths.js';

/** Thrown when a path resolves (symlinks included) outside the session's working directories. */
export class OutsideWorkspaceError extends Error {}

/** Thrown when a directory an operation writes in was moved or swapped while it ran. */
export class DirectoryChangedError extends Error {}

/** Linux lets a path name a directory through an open descriptor, so later swaps of its path cannot redirect a write. */
const FD_DIR = '/proc/self/fd';
const canPinDirectories = process.platform === 'linux' && existsSync(FD_DIR);

/** A directory an operation writes in, held open so every write lands in the directory that was checked. */
export interface PinnedDir {
  /** The directory's path as the operation names it. */
  path: string;
  /** The form of `dir/name` to hand to `fs` for an entry of this directory. */
  entry(name: Buffer): string | Buffer;
  /** Throws DirectoryChangedError when the directory's path no longer leads to the pinned directory. */
  verify(): Promise<void>;
}

/**
 * Opens the directories an operation writes in, one component at a time
 * from a working directory, never following a symlink that leads outside
 * the working directories (one that stays inside is followed). Missing
 * directories are created on request and remembered, so a failed
 * operation can remove the ones it made.
 */
export class ContainedDirs {
  private readonly open = new Map<string, Promise<PinnedDir>>();
  private readonly handles: FileHandle[] = [];
  /** Directories this operation created, outermost first. */
  readonly created: string[] = [];

  constructor(private readonly roots: readonly string[]) {}

  /** The pinned parent directory of `absPath`, created when `create` is set. */
  parentOf(absPath: string, create: boolean): Promise<PinnedDir> {
    return this.dir(dirname(absPath), create);
  }

  dir(absDir: string, create: boolean): Promise<PinnedDir> {
    const key = `${create ? '+' : '-'}${absDir}`;
    let pinned = this.open.get(key);
    if (!pinned) {
      pinned = this.pin(absDir, create);
      this.open.set(key, pinned);
      pinned.catch(() => this.open.delete(key));
    }
    return pinned;
  }

  /** Makes the renames and links in every directory written durable (file contents are synced as they are written). */
  async sync(): Promise<void> {
    await Promise.all(
      this.handles.map((h) =>
        h.sync().catch(() => {
          // Not every file system can sync a directory; the renames are atomic regardless.
        }),
      ),
    );
  }

  async close(): Promise<void> {
    await Promise.all(this.handles.splice(0).map((h) => h.close().catch(() => undefined)));
    this.open.clear();
  }

  private async pin(absDir: string, create: boolean): Promise<PinnedDir> {
    const root = this.roots.filter((r) => isInsideDir(r, absDir)).sort((a, b) => b.length - a.length)[0];
    if (root === undefined) throw new OutsideWorkspaceError(`${absDir} is outside the session's working directories`);
    if (!canPinDirectories) return this.checkedByPath(absDir, create);
    let handle = await this.openDir(root);
    let current = root;
    const parts = (relativeInside(root, absDir) ?? '').split('/').filter((p) => p !== '');
    for (let hops = 0; parts.length > 0; ) {
      const name = parts.shift()!;
      const next = join(current, name);
      const through = `${FD_DIR}/${handle.fd}/`;
      const entry = Buffer.concat([Buffer.from(through), encodePathBytes(name)]);
      let child: FileHandle | undefined;
      try {
        child = await this.openDir(entry);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' && create) {
          await mkdir(entry).catch((e: NodeJS.ErrnoException) => {
            if (e.code !== 'EEXIST') throw e;
          });
          if (!this.created.includes(next)) this.created.push(next);
          parts.unshift(name);
          continue;
        }
        if (code !== 'ELOOP' && code !== 'ENOTDIR') throw error;
        // A symlink: follow it only when it stays inside a working directory.
        const real = await realPath(entry);
        const inside = real !== undefined && this.roots.some((r) => isInsideDir(r, real));
        if (!inside || ++hops > 40) throw new OutsideWorkspaceError(`${next} leads outside the session's working directories`);
        const st = await lstat(fsPath(real));
        if (!st.isDirectory()) throw new DirectoryChangedError(`${next} is not a directory`);
        child = await this.openDir(fsPath(real));
        current = real;
        handle = child;
        continue;
      }
      handle = child;
      current = next;
    }
    const pinnedStat = await handle.stat({ bigint: true });
    const fdPath = `${FD_DIR}/${handle.fd}/`;
    return {
      path: absDir,
      entry: (name) => Buffer.concat([Buffer.from(fdPath), name]),
      verify: async () => {
        const now = await lstat(fsPath(absDir), { bigint: true }).catch(() => undefined);
        if (!now || now.ino !== pinnedStat.ino || now.dev !== pinnedStat.dev) {
          throw new DirectoryChangedError(`${absDir} was moved or replaced while the operation ran`);
        }
      },
    };
  }

  private async openDir(path: string | Buffer): Promise<FileHandle> {
    const handle = await open(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    this.handles.push(handle);
    return handle;
  }

  /** Without descriptor paths: resolve and check the directory, then check again right before each write. */
  private async checkedByPath(absDir: string, create: boolean): Promise<PinnedDir> {
    const check = async (): Promise<void> => {
      const real = await realPath(absDir);
      if (real === undefined) throw new DirectoryChangedError(`${absDir} no longer exists`);
      if (!this.roots.some((r) => isInsideDir(r, real))) throw new OutsideWorkspaceError(`${absDir} leads outside the session's working directories`);
    };
    if (create && (await realPath(absDir)) === undefined) {
      await this.dir(dirname(absDir), true);
      await mkdir(fsPath(absDir)).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== 'EEXIST') throw e;
      });
      this.created.push(absDir);
    }
    await check();
    const prefix = encodePathBytes(absDir.endsWith(sep) ? absDir : absDir + sep);
    return { path: absDir, entry: (name) => Buffer.concat([prefix, name]), verify: check };
  }
}

/** The real path of a path (symlinks resolved), its bytes kept; undefined when it does not exist. */
export async function realPath(path: string | Buffer): Promise<string | undefined> {
  const p = typeof path === 'string' ? fsPath(path) : path;
  const real = await realpath(p, { encoding: 'buffer' }).catch(() => undefined);
  return real === undefined ? undefined : decodePathBytes(real);
}
