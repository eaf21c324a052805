/**
 * Loose refs of the shadow repository: each written atomically (temporary
 * file, fsync, rename), read back, listed and deleted. Refs that stock git
 * moved into `packed-refs` are still read, so inspection with git cannot hide
 * checkpoints.
 */
import { readdir, readFile, rm, rmdir } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { StoreInputError } from './errors.js';
import { isNotFound, writeFileAtomic } from '../private-files.js';
import { isOid } from './object-format.js';
import { shadowTmpDir } from './shadow-repo.js';

const REF_PATTERN = /^refs\/(?:[A-Za-z0-9_%+-]+\/)*[A-Za-z0-9_%+-]+$/;

function assertRefName(name: string): void {
  if (!REF_PATTERN.test(name)) throw new StoreInputError(`invalid ref name ${JSON.stringify(name)}`);
}

/** Reads a ref's object id (loose first, then packed-refs); undefined when absent. */
export async function readRef(repo: string, name: string): Promise<string | undefined> {
  assertRefName(name);
  try {
    const value = (await readFile(join(repo, name), 'utf8')).trim();
    if (isOid(value)) return value;
  } catch (error) {
    if (!isNotFound(error) && (error as NodeJS.ErrnoException).code !== 'EISDIR') throw error;
  }
  return (await readPackedRefs(repo)).get(name);
}

/** Points a ref at an object, atomically. */
export async function writeRef(repo: string, name: string, oid: string): Promise<void> {
  assertRefName(name);
  if (!isOid(oid)) throw new StoreInputError(`ref ${name} must point at an object id, got ${JSON.stringify(oid)}`);
  await writeFileAtomic(join(repo, name), `${oid}\n`, shadowTmpDir(repo));
}

/** Deletes a loose ref and the directories it leaves empty (up to, not including, `refs/`). */
export async function deleteRef(repo: string, name: string): Promise<void> {
  assertRefName(name);
  await rm(join(repo, name), { force: true });
  let dir = dirname(join(repo, name));
  const stop = join(repo, 'refs');
  while (dir.startsWith(stop + sep) && dir !== stop) {
    try {
      await rmdir(dir);
    } catch {
      break;
    }
    dir = dirname(dir);
  }
}

/** Every ref under `prefix` (e.g. `refs/changeset-server/sessions/`), name → object id. */
export async function listRefs(repo: string, prefix: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const [name, oid] of await readPackedRefs(repo)) if (name.startsWith(prefix)) out.set(name, oid);
  const base = prefix.endsWith('/') ? prefix.slice(0, -1) : dirname(prefix);
  const walk = async (dir: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      if (isNotFound(error)) return;
      throw error;
    }
    for (const entry of entries) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) {
        await walk(full);
      } else if (entry.isFile()) {
        const name = relative(repo, full).split(sep).join('/');
        if (!name.startsWith(prefix)) continue;
        const value = (await readFile(full, 'utf8').catch(() => '')).trim();
        if (isOid(value)) out.set(name, value);
      }
    }
  };
  await walk(join(repo, base));
  return out;
}

async function readPackedRefs(repo: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let text: string;
  try {
    text = await readFile(join(repo, 'packed-refs'), 'utf8');
  } catch {
    return out;
  }
  for (const line of text.split('\n')) {
    const match = /^([0-9a-f]{40}) (refs\/\S+)$/.exec(line);
    if (match) out.set(match[2]!, match[1]!);
  }
  return out;
}
