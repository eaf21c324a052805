import { constants, existsSync } from 'node:fs';
import { lstat, mkdir, open, realpath, rmdir, type FileHandle } from 'node:fs/promises';
import { basename, dirname, sep } from 'node:path';
import { decodePathBytes, encodePathBytes, fsPath } from '../path-bytes.js';
import { isInsideDir } from '../paths.js';

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
 * Directories held open at once besides those kept for a rollback; beyond
 * it the least recently used are closed (and opened, and checked, again
 * when needed).
 */
const MAX_OPEN_DIRS = 128;

/** A pinned directory and the descriptor that pins it. */
interface Held {
  pinned: Promise<PinnedDir & { handle?: FileHandle }>;
}

/**
 * Opens the directories an operation writes in, each through its already
 * opened parent, never following a symlink that leads outside the working
 * directories (one that stays inside is followed). Missing directories are
 * created on request and remembered, so a failed operation can remove the
 * ones it made. Directories a file was written in are kept open until the
 * end, so a rollback writes through the very directory each write went to,
 * wherever its path leads by then. Of the others at most
 * {@link MAX_OPEN_DIRS} stay open: operations write in sorted order, so the
 * ones closed are rarely needed again.
 */
export class ContainedDirs {
  private readonly held = new Map<string, Held>();
  /** Directories kept open until close(), never evicted. */
  private readonly kept = new Set<string>();
  /** Directories this operation created, outermost first. */
  readonly created: string[] = [];

  constructor(private readonly roots: readonly string[]) {}

  /**
   * The pinned parent directory of `absPath`, created when `create` is set;
   * with `keep`, held open until close() (a caller may then use it later).
   */
  async parentOf(absPath: string, create: boolean, keep = false): Promise<PinnedDir> {
    // Only here, between two uses, may descriptors be closed: nothing holds one then but what is kept.
    await this.evict();
    const dir = await this.dir(dirname(absPath), create);
    if (keep) this.kept.add(dirname(absPath));
    return dir;
  }

  /** Removes, innermost first, the directories this operation created, each through its parent as it was pinned. */
  async removeCreated(): Promise<void> {
    for (const absDir of [...this.created].reverse()) {
      const parent = await this.held.get(dirname(absDir))?.pinned.catch(() => undefined);
      const path = parent ? parent.entry(encodePathBytes(basename(absDir))) : fsPath(absDir);
      await rmdir(path).catch(() => undefined);
    }
  }

  /** Makes the renames and links in every directory written durable (file contents are synced as they are written). */
  async sync(): Promise<void> {
    await Promise.all([...this.held.values()].map((h) => syncHeld(h)));
  }

  async close(): Promise<void> {
    const all = [...this.held.values()];
    this.held.clear();
    this.kept.clear();
    await Promise.all(all.map((h) => closeHeld(h)));
  }

  private dir(absDir: string, create: boolean): Promise<PinnedDir & { handle?: FileHandle }> {
    const known = this.held.get(absDir);
    if (known) {
      // Most recently used last.
      this.held.delete(absDir);
      this.held.set(absDir, known);
      return known.pinned;
    }
    const held: Held = { pinned: this.pin(absDir, create) };
    this.held.set(absDir, held);
    held.pinned.catch(() => {
      if (this.held.get(absDir) === held) this.held.delete(absDir);
    });
    return held.pinned;
  }

  private async evict(): Promise<void> {
    const evictable = [...this.held.keys()].filter((key) => !this.kept.has(key));
    if (evictable.length <= MAX_OPEN_DIRS) return;
    const victims = evictable.slice(0, evictable.length - MAX_OPEN_DIRS / 2);
    for (const key of victims) {
      const held = this.held.get(key)!;
      this.held.delete(key);
      await syncHeld(held);
      await closeHeld(held);
    }
  }

  private async pin(absDir: string, create: boolean): Promise<PinnedDir & { handle?: FileHandle }> {
    if (!this.roots.some((r) => isInsideDir(r, absDir))) throw new OutsideWorkspaceError(`${absDir} is outside the session's working directories`);
    if (!canPinDirectories) return this.checkedByPath(absDir, create);
    if (this.roots.includes(absDir)) return pinnedAt(absDir, await openDir(fsPath(absDir)));
    const parent = await this.dir(dirname(absDir), create);
    const name = encodePathBytes(basename(absDir));
    try {
      return pinnedAt(absDir, await openDir(parent.entry(name)));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && create) {
        await mkdir(parent.entry(name)).catch((e: NodeJS.ErrnoException) => {
          if (e.code !== 'EEXIST') throw e;
        });
        if (!this.created.includes(absDir)) this.created.push(absDir);
        // Its parent stays open, so a rollback removes the directory made, wherever the parent's path leads by then.
        this.kept.add(dirname(absDir));
        return pinnedAt(absDir, await openDir(parent.entry(name)));
      }
      if (code !== 'ELOOP' && code !== 'ENOTDIR') throw error;
      // A symlink: followed only when it stays inside a working directory, and then pinned where it leads.
      const real = await realPath(parent.entry(name));
      if (real === undefined || real === absDir || !this.roots.some((r) => isInsideDir(r, real))) {
        throw new OutsideWorkspaceError(`${absDir} leads outside the session's working directories`);
      }
      const target = await this.dir(real, false);
      return pinnedAt(absDir, await openDir(target.entry(Buffer.from('.'))), real);
    }
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

function openDir(path: string | Buffer): Promise<FileHandle> {
  return open(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
}

/**
 * A directory pinned by an open descriptor, whose path must keep leading to
 * it: the path itself, or for a directory reached through a symlink inside
 * the workspace, the real path the link resolved to.
 */
async function pinnedAt(absDir: string, handle: FileHandle, throughLinkTo?: string): Promise<PinnedDir & { handle: FileHandle }> {
  const pinnedStat = await handle.stat({ bigint: true });
  const fdPath = `${FD_DIR}/${handle.fd}/`;
  return {
    path: absDir,
    handle,
    entry: (name) => Buffer.concat([Buffer.from(fdPath), name]),
    verify: async () => {
      const leadsTo = throughLinkTo === undefined ? absDir : await realPath(absDir);
      const now = leadsTo === throughLinkTo || throughLinkTo === undefined ? await lstat(fsPath(leadsTo!), { bigint: true }).catch(() => undefined) : undefined;
      if (!now || now.ino !== pinnedStat.ino || now.dev !== pinnedStat.dev) {
        throw new DirectoryChangedError(`${absDir} was moved or replaced while the operation ran`);
      }
    },
  };
}

async function syncHeld(held: Held): Promise<void> {
  const pinned = await held.pinned.catch(() => undefined);
  await pinned?.handle?.sync().catch(() => {
    // Not every file system can sync a directory; the renames are atomic regardless.
  });
}

async function closeHeld(held: Held): Promise<void> {
  const pinned = await held.pinned.catch(() => undefined);
  await pinned?.handle?.close().catch(() => undefined);
}

/** The real path of a path (symlinks resolved), its bytes kept; undefined when it does not exist. */
export async function realPath(path: string | Buffer): Promise<string | undefined> {
  const p = typeof path === 'string' ? fsPath(path) : path;
  const real = await realpath(p, { encoding: 'buffer' }).catch(() => undefined);
  return real === undefined ? undefined : decodePathBytes(real);
}

/** Removes the directories an operation emptied that the state it restores does not have, deepest first; one still holding anything stays. */
export async function removeEmptiedDirs(dirs: ContainedDirs, candidates: readonly string[]): Promise<void> {
  for (const dir of [...candidates].sort((a, b) => b.length - a.length)) {
    const parent = await dirs.parentOf(dir, false).catch(() => undefined);
    if (!parent) continue;
    await parent
      .verify()
      .then(() => rmdir(parent.entry(encodePathBytes(basename(dir)))))
      .catch(() => undefined);
  }
}
