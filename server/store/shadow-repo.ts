/**
 * Creating and locking the shadow bare repository. It is a normal bare git
 * repository (stock git can inspect it); its `objects/info/alternates` points
 * at the workspace repository's objects so stock git also resolves the
 * objects we deliberately did not copy.
 */
import { readFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { StoreBusyError } from './errors.js';
import { isNotFound, mkdirPrivate, openPrivate, writeFileAtomic } from '../private-files.js';

const CONFIG = `[core]
\trepositoryformatversion = 0
\tfilemode = true
\tbare = true
\tlogallrefupdates = false
[gc]
\tauto = 0
`;

/** Directory for temporary files that are renamed into the repository. */
export function shadowTmpDir(shadowDir: string): string {
  return join(shadowDir, 'changeset-server-tmp');
}

/** Creates the bare repository skeleton if missing and points its alternates at `workspaceObjectsDir`. */
export async function initShadowRepo(shadowDir: string, workspaceObjectsDir: string | undefined): Promise<void> {
  await mkdirPrivate(join(shadowDir, 'objects', 'pack'));
  await mkdirPrivate(join(shadowDir, 'objects', 'info'));
  await mkdirPrivate(join(shadowDir, 'refs', 'heads'));
  await mkdirPrivate(join(shadowDir, 'refs', 'tags'));
  await writeIfMissing(join(shadowDir, 'HEAD'), 'ref: refs/heads/main\n');
  await writeIfMissing(join(shadowDir, 'config'), CONFIG);
  await writeIfMissing(join(shadowDir, 'description'), 'Shadow object store of changeset-server. Read-only for git.\n');
  const alternates = join(shadowDir, 'objects', 'info', 'alternates');
  const wanted = workspaceObjectsDir ? `${workspaceObjectsDir}\n` : undefined;
  const current = await readFile(alternates, 'utf8').catch(() => undefined);
  if (wanted !== current) {
    if (wanted) await writeFileAtomic(alternates, wanted, shadowTmpDir(shadowDir));
    else await rm(alternates, { force: true });
  }
  await removeCrashLeftovers(shadowDir);
}

async function writeIfMissing(path: string, content: string): Promise<void> {
  try {
    const handle = await openPrivate(path, 'wx');
    try {
      await handle.writeFile(content);
    } finally {
      await handle.close();
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/** Temp files and packs without an index can only be left by a crash; they hold nothing acknowledged. */
async function removeCrashLeftovers(shadowDir: string): Promise<void> {
  const packDir = join(shadowDir, 'objects', 'pack');
  const names = await readdir(packDir);
  const indexed = new Set(names.filter((n) => n.endsWith('.idx')).map((n) => n.slice(0, -4)));
  for (const name of names) {
    const orphanPack = name.endsWith('.pack') && !indexed.has(name.slice(0, -5));
    if (name.startsWith('tmp_') || orphanPack) await rm(join(packDir, name), { force: true });
  }
  await rm(shadowTmpDir(shadowDir), { recursive: true, force: true });
}

/** A held write lock; release it on close. */
export interface ShadowLock {
  /** Removes the lock file. */
  release(): Promise<void>;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the single-writer lock of a shadow repository. A lock left by a
 * process that no longer runs is taken over; a live holder is an error.
 */
export async function lockShadowRepo(shadowDir: string): Promise<ShadowLock> {
  const path = join(shadowDir, 'changeset-server.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await openPrivate(path, 'wx');
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      let released = false;
      return {
        release: async () => {
          if (released) return;
          released = true;
          await rm(path, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number((await readFile(path, 'utf8').catch((e: unknown) => (isNotFound(e) ? '' : '?'))).trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && processAlive(holder)) {
        throw new StoreBusyError(`shadow store ${shadowDir} is in use by process ${holder}`);
      }
      if (holder === process.pid) throw new StoreBusyError(`shadow store ${shadowDir} is already open in this process`);
      await rm(path, { force: true });
    }
  }
  throw new StoreBusyError(`could not lock shadow store ${shadowDir}`);
}
