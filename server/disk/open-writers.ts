import { readdir, readFile, readlink, stat } from 'node:fs/promises';

/** A process holding a file open with write access. */
export interface OpenWriter {
  pid: number;
  /** The process's command name, as `ps` shows it. */
  name: string;
}

/** Identifies one file on disk whatever names lead to it. */
export interface FileKey {
  dev: bigint;
  ino: bigint;
}

export function fileKey(f: FileKey): string {
  return `${f.dev}:${f.ino}`;
}

/** How a person reads who holds a file: `held open for writing by vim (pid 4242)`. */
export function describeWriter(w: OpenWriter): string {
  return `held open for writing by ${w.name} (pid ${w.pid})`;
}

const O_ACCMODE = 0o3;

/**
 * Which of these files another process holds open for writing, keyed by
 * {@link fileKey}. Linux only (through `/proc`); elsewhere, and for
 * processes whose descriptors this user may not read, nothing is found.
 * Writes through such a descriptor would land in a file the operation is
 * about to replace, where nobody would see them again.
 */
export async function findOpenWriters(files: Iterable<FileKey>): Promise<Map<string, OpenWriter>> {
  const wanted = new Set([...files].map(fileKey));
  const found = new Map<string, OpenWriter>();
  if (wanted.size === 0 || process.platform !== 'linux') return found;
  const pids = (await readdir('/proc').catch(() => [] as string[])).filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid);
  await Promise.all(pids.map((pid) => scanProcess(Number(pid), wanted, found)));
  return found;
}

async function scanProcess(pid: number, wanted: ReadonlySet<string>, found: Map<string, OpenWriter>): Promise<void> {
  const fdDir = `/proc/${pid}/fd`;
  const fds = await readdir(fdDir).catch(() => [] as string[]);
  await Promise.all(
    fds.map(async (fd) => {
      // Sockets, pipes and anonymous descriptors have no path and cannot be one of our files.
      const target = await readlink(`${fdDir}/${fd}`).catch(() => '');
      if (!target.startsWith('/')) return;
      // Only regular files can be ours; a workspace may itself live under /dev (tmpfs in /dev/shm).
      const st = await stat(`${fdDir}/${fd}`, { bigint: true }).catch(() => undefined);
      if (!st?.isFile()) return;
      const key = fileKey(st);
      if (!wanted.has(key) || found.has(key)) return;
      const info = await readFile(`/proc/${pid}/fdinfo/${fd}`, 'utf8').catch(() => '');
      const flags = /^flags:\s*([0-7]+)/m.exec(info)?.[1];
      if (flags === undefined || (parseInt(flags, 8) & O_ACCMODE) === 0) return;
      const name = (await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '')).trim() || 'a process';
      found.set(key, { pid, name });
    }),
  );
}
