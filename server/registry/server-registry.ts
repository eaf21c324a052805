import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { unlinkSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { isInsideDir } from '../paths.js';

/** What a running `serve` writes about itself so other processes can find it. */
export interface ServerEntry {
  /** Process id of the server. */
  pid: number;
  /** WebSocket URL, `ws://HOST:PORT/`. */
  url: string;
  /** Bearer token; absent when the server runs without authentication. */
  token?: string;
  /** URL of the web viewer, token included. */
  viewer: string;
  /** Working directories the server records (real paths). */
  directories: string[];
  /** ISO 8601 time the server started. */
  startedAt: string;
}

/** `<stateDir>/servers`: one `<pid>.json` per running server. */
export function registryDir(stateDir: string): string {
  return join(stateDir, 'servers');
}

function entryPath(stateDir: string, pid: number): string {
  return join(registryDir(stateDir), `${pid}.json`);
}

/**
 * Writes the entry of a running server, readable by its owner only (the
 * token is a secret). The write is atomic: readers never see half a file.
 */
export async function writeServerEntry(stateDir: string, entry: ServerEntry): Promise<string> {
  const dir = registryDir(stateDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = entryPath(stateDir, entry.pid);
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
  await rename(tmp, path);
  return path;
}

/** Removes a server's entry (missing is fine). */
export async function removeServerEntry(stateDir: string, pid: number): Promise<void> {
  await rm(entryPath(stateDir, pid), { force: true });
}

/** Synchronous {@link removeServerEntry}, for `process.on('exit')`. */
export function removeServerEntrySync(stateDir: string, pid: number): void {
  try {
    unlinkSync(entryPath(stateDir, pid));
  } catch {
    // already gone
  }
}

/** True while a process with this id exists (EPERM: it exists but is someone else's). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Entries of the running servers, oldest first. Files of processes that no
 * longer exist are deleted; unreadable or malformed files are skipped.
 */
export async function listServers(stateDir: string): Promise<ServerEntry[]> {
  let names: string[];
  try {
    names = await readdir(registryDir(stateDir));
  } catch {
    return [];
  }
  const out: ServerEntry[] = [];
  for (const name of names) {
    if (!/^\d+\.json$/.test(name)) continue;
    const path = join(registryDir(stateDir), name);
    const entry = parseEntry(await readFile(path, 'utf8').catch(() => ''));
    if (!entry || entry.pid !== Number(name.slice(0, -5))) continue;
    if (!isProcessAlive(entry.pid)) {
      await rm(path, { force: true });
      continue;
    }
    out.push(entry);
  }
  return out.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
}

/**
 * The running server recording `dir`: among the servers one of whose
 * directories contains it, the one with the closest (longest) such
 * directory, the most recently started on a tie.
 */
export async function findServerFor(stateDir: string, dir: string): Promise<ServerEntry | undefined> {
  const target = resolve(dir);
  let best: { entry: ServerEntry; depth: number } | undefined;
  for (const entry of await listServers(stateDir)) {
    for (const root of entry.directories) {
      if (!isInsideDir(root, target)) continue;
      const depth = root.length;
      if (!best || depth > best.depth || (depth === best.depth && entry.startedAt >= best.entry.startedAt)) best = { entry, depth };
    }
  }
  return best?.entry;
}

function parseEntry(text: string): ServerEntry | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (!Number.isInteger(v['pid']) || typeof v['url'] !== 'string' || typeof v['viewer'] !== 'string' || typeof v['startedAt'] !== 'string') return undefined;
  if (v['token'] !== undefined && typeof v['token'] !== 'string') return undefined;
  const dirs = v['directories'];
  if (!Array.isArray(dirs) || !dirs.every((d) => typeof d === 'string' && isAbsolute(d))) return undefined;
  const entry: ServerEntry = { pid: v['pid'] as number, url: v['url'], viewer: v['viewer'], directories: dirs as string[], startedAt: v['startedAt'] };
  if (typeof v['token'] === 'string') entry.token = v['token'];
  return entry;
}
