/**
 * A read-only view of a workspace store, shaped like the `fs` isomorphic-git
 * takes, over a virtual bare repository. isomorphic-git reads objects only
 * from its own `objects` directory (loose files and packs) and does not
 * follow alternates, but a checkpoint references blobs that live only in the
 * workspace repository or a nested repository (the store deduplicates
 * against them instead of copying). Serving every object as a loose object
 * read through the store's own reader, which follows those fallbacks, lets
 * `push` pack exactly what is reachable without copying anything to disk.
 */
import { deflateSync } from 'node:zlib';
import { ObjectNotFoundError } from '../store/errors.js';
import type { ObjectStore, StoredObject } from '../store/types.js';

/** The virtual git directory isomorphic-git is pointed at. */
export const VIRTUAL_GITDIR = '/changeset-server-mirror.git';

/** Objects made for the push only (the manifest), kept in memory. */
export type ObjectOverlay = ReadonlyMap<string, StoredObject>;

/** The subset of `fs.promises` isomorphic-git calls. */
export interface GitFsPromises {
  readFile(path: string, options?: unknown): Promise<Uint8Array | string>;
  writeFile(path: string, data: unknown, options?: unknown): Promise<void>;
  mkdir(path: string, options?: unknown): Promise<void>;
  rmdir(path: string, options?: unknown): Promise<void>;
  unlink(path: string): Promise<void>;
  stat(path: string): Promise<VirtualStat>;
  lstat(path: string): Promise<VirtualStat>;
  readdir(path: string): Promise<string[]>;
  readlink(path: string): Promise<string>;
  symlink(target: string, path: string): Promise<void>;
}

/** What `stat` answers for a virtual file. */
export interface VirtualStat {
  type: 'file';
  mode: number;
  size: number;
  ino: number;
  mtimeMs: number;
  ctimeMs: number;
  uid: number;
  gid: number;
  dev: number;
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

function notFound(path: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`ENOENT: no such file, '${path}'`);
  error.code = 'ENOENT';
  return error;
}

function fileStat(size: number): VirtualStat {
  return {
    type: 'file',
    mode: 0o100644,
    size,
    ino: 0,
    mtimeMs: 0,
    ctimeMs: 0,
    uid: 0,
    gid: 0,
    dev: 0,
    isFile: () => true,
    isDirectory: () => false,
    isSymbolicLink: () => false,
  };
}

/**
 * An `fs` for isomorphic-git: refs come from `refs` (full name → object id),
 * objects from `overlay`, then `store`. Writes (isomorphic-git records the
 * remote's new ref value after a push) are accepted and dropped, so nothing
 * reaches the disk.
 */
export function storeGitFs(store: ObjectStore, refs: ReadonlyMap<string, string>, overlay: ObjectOverlay = new Map()): { promises: GitFsPromises } {
  const prefix = `${VIRTUAL_GITDIR}/`;
  const objectPath = /^objects\/([0-9a-f]{2})\/([0-9a-f]{38})$/;

  const readLoose = async (oid: string): Promise<Buffer | undefined> => {
    let object = overlay.get(oid);
    if (!object) {
      try {
        object = await store.readObject(oid);
      } catch (error) {
        if (error instanceof ObjectNotFoundError) return undefined;
        throw error;
      }
    }
    const header = Buffer.from(`${object.type} ${object.content.byteLength}\0`);
    // Level 1: isomorphic-git inflates it again at once; only the framing matters.
    return deflateSync(Buffer.concat([header, object.content]), { level: 1 });
  };

  const read = async (path: string): Promise<Buffer> => {
    if (!path.startsWith(prefix)) throw notFound(path);
    const rel = path.slice(prefix.length);
    const loose = objectPath.exec(rel);
    if (loose) {
      const bytes = await readLoose(`${loose[1]}${loose[2]}`);
      if (bytes) return bytes;
      throw notFound(path);
    }
    const ref = refs.get(rel);
    if (ref !== undefined) return Buffer.from(`${ref}\n`);
    throw notFound(path);
  };

  const promises: GitFsPromises = {
    readFile: async (path, options) => {
      const bytes = await read(path);
      const encoding = typeof options === 'string' ? options : (options as { encoding?: string } | undefined)?.encoding;
      return encoding ? bytes.toString(encoding as BufferEncoding) : bytes;
    },
    writeFile: async () => undefined,
    mkdir: async () => undefined,
    rmdir: async () => undefined,
    unlink: async () => undefined,
    stat: async (path) => fileStat((await read(path)).byteLength),
    lstat: async (path) => fileStat((await read(path)).byteLength),
    readdir: async (path) => {
      throw notFound(path);
    },
    readlink: async (path) => {
      throw notFound(path);
    },
    symlink: async () => undefined,
  };
  return { promises };
}
