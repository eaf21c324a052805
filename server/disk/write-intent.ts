import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readdir, readFile, readlink, rm, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { encodePathBytes } from '../path-bytes.js';
import { hashObject } from '../snapshot/index.js';
import { ContainedDirs } from './contained-dirs.js';
import { TEMP_NAME, type SwapNames } from './file-swap.js';
import { lstatOrUndefined } from './workspace-file.js';

/** One write an operation is about to make: where, under which temporary names, replacing which version. */
export interface IntendedWrite {
  absPath: string;
  names: SwapNames;
  /** Blob id of the version being replaced; absent when the path is created. */
  expectedOid?: string;
  /** Blob id of the version written; absent when the path is removed. */
  writtenOid?: string;
}

/**
 * The write-ahead record of an operation in progress, kept in the store
 * (private, 0600) until the operation ends. After a crash it names exactly
 * which temporary files are ours and where, so a restart can remove them
 * and put back a file that was moved aside but not yet replaced.
 */
export class WriteIntent {
  private constructor(private readonly file: string) {}

  static async begin(storeRoot: string, writes: readonly IntendedWrite[]): Promise<WriteIntent> {
    const dir = intentDir(storeRoot);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, `${Date.now()}-${randomBytes(4).toString('hex')}.json`);
    const handle = await open(file, 'wx', 0o600);
    try {
      await handle.writeFile(JSON.stringify({ writes }));
      await handle.sync();
    } finally {
      await handle.close();
    }
    return new WriteIntent(file);
  }

  /** The operation ended (done or put back): nothing left to recover. */
  async end(): Promise<void> {
    await rm(this.file, { force: true });
  }
}

/** What recovery did, for the log. */
export interface RecoveryReport {
  removed: number;
  restored: string[];
  kept: string[];
}

/**
 * Cleans up after operations a crash interrupted: removes our temporary
 * files in the directories their intents name (nowhere else, nothing that
 * is not ours), and puts back a file that was moved aside when its name
 * is empty. A moved-aside file whose name was taken meanwhile is removed
 * only when it is the version the safety checkpoint holds.
 */
export async function recoverInterruptedWrites(storeRoot: string, workingDirs: readonly string[]): Promise<RecoveryReport> {
  const report: RecoveryReport = { removed: 0, restored: [], kept: [] };
  const dir = intentDir(storeRoot);
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.json'));
  for (const file of files) {
    const path = join(dir, file);
    const writes = parseIntent(await readFile(path, 'utf8').catch(() => ''));
    const dirs = new ContainedDirs(workingDirs);
    try {
      for (const w of writes) await recoverOne(dirs, w, report);
    } finally {
      await dirs.close();
    }
    await rm(path, { force: true });
  }
  return report;
}

async function recoverOne(dirs: ContainedDirs, w: IntendedWrite, report: RecoveryReport): Promise<void> {
  if (!TEMP_NAME.test(w.names.tmp) || !TEMP_NAME.test(w.names.aside)) return;
  const pinned = await dirs.parentOf(w.absPath, false).catch(() => undefined);
  if (!pinned) return;
  const tmp = pinned.entry(Buffer.from(w.names.tmp));
  const aside = pinned.entry(Buffer.from(w.names.aside));
  const target = pinned.entry(encodePathBytes(basename(w.absPath)));
  if (await lstatOrUndefined(tmp)) {
    await unlink(tmp);
    report.removed++;
  }
  const asideStat = await lstatOrUndefined(aside);
  if (!asideStat) return;
  if (!(await lstatOrUndefined(target))) {
    await link(aside, target);
    await unlink(aside);
    report.restored.push(w.absPath);
    return;
  }
  const content = asideStat.isSymbolicLink() ? Buffer.from(await readlink(aside, { encoding: 'buffer' })) : await readFile(aside);
  // Moved aside but already replaced: both versions it can be are recorded (the safety checkpoint, or what the operation wrote).
  const oid = hashObject('blob', content);
  if (oid === w.expectedOid || oid === w.writtenOid) {
    await unlink(aside);
    report.removed++;
  } else {
    report.kept.push(`${dirname(w.absPath)}/${w.names.aside}`);
  }
}

function parseIntent(text: string): IntendedWrite[] {
  try {
    const parsed = JSON.parse(text) as { writes?: unknown };
    if (!Array.isArray(parsed.writes)) return [];
    return parsed.writes.filter(
      (w): w is IntendedWrite =>
        typeof w === 'object' && w !== null && typeof (w as IntendedWrite).absPath === 'string' && typeof (w as IntendedWrite).names?.tmp === 'string' && typeof (w as IntendedWrite).names?.aside === 'string',
    );
  } catch {
    // A torn intent was written before any file was touched: nothing to recover.
    return [];
  }
}

function intentDir(storeRoot: string): string {
  return join(storeRoot, 'operations-in-progress');
}
