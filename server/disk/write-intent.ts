import { randomBytes } from 'node:crypto';
import type { BigIntStats } from 'node:fs';
import { link, mkdir, open, readdir, readFile, readlink, rm, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { GitMode } from '../changes/file-change.js';
import { encodePathBytes } from '../path-bytes.js';
import { hashObject } from '../snapshot/index.js';
import { ContainedDirs } from './contained-dirs.js';
import { TEMP_NAME, type SwapNames } from './file-swap.js';
import { finishInterruptedOperation, type FinishingStore } from './finish-operation.js';
import { lstatOrUndefined } from './workspace-file.js';

/** One write an operation is about to make: where, under which temporary names, replacing which version. */
export interface IntendedWrite {
  absPath: string;
  names: SwapNames;
  /** Blob id of the version being replaced; absent when the path is created. */
  expectedOid?: string;
  expectedMode?: GitMode;
  /** Blob id of the version written; absent when the path is removed. The blob is in the store before the intent is begun. */
  writtenOid?: string;
  /** Mode, permissions and owner the written version gets. */
  written?: { mode: GitMode; perm?: number; uid?: number; gid?: number };
}

/**
 * Which operation an intent belongs to: the safety checkpoint of that
 * operation carries the same `id` (`SafetyDetails.intent`), and is what
 * tells a restart that the operation had begun writing.
 */
export interface IntentOperation {
  sessionId: string;
  id: string;
  /** Directories to remove once emptied, when the operation is finished. */
  removeDirs?: string[];
}

/** A fresh id tying an intent to its operation's safety checkpoint. */
export function newIntentId(): string {
  return randomBytes(8).toString('hex');
}

/**
 * The write-ahead record of an operation in progress, kept in the store
 * (private, 0600) until the operation ends. It is written before the
 * operation's safety checkpoint. After a crash it names which temporary
 * files are ours and where, and what each write was to do, so a restart
 * can finish an operation whose safety checkpoint was written.
 */
export class WriteIntent {
  private constructor(private readonly file: string) {}

  static async begin(storeRoot: string, writes: readonly IntendedWrite[], operation?: IntentOperation): Promise<WriteIntent> {
    const dir = intentDir(storeRoot);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, `${Date.now()}-${randomBytes(4).toString('hex')}.json`);
    const handle = await open(file, 'wx', 0o600);
    try {
      await handle.writeFile(JSON.stringify({ writes, ...(operation ? { operation } : {}) }));
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
  /** Files an interrupted operation had still to write, written now. */
  finished: string[];
  /** Files an interrupted operation had still to write, left as they are because they changed since (or could not be written). */
  unfinished: string[];
}

/**
 * Cleans up after operations a crash interrupted, then finishes them: an
 * operation whose safety checkpoint was written (so `undo` can put back
 * every file it touches) is carried to its end, so the tree is never left
 * half-written and the session's history says what the tree holds. One
 * killed before its safety checkpoint wrote nothing, and is dropped.
 * Temporary files are removed only in the directories their intents name;
 * a moved-aside file is put back when its name is empty, and removed only
 * when it is a version the stores hold.
 */
export async function recoverInterruptedWrites(storeRoot: string, workingDirs: readonly string[], store?: FinishingStore): Promise<RecoveryReport> {
  const report: RecoveryReport = { removed: 0, restored: [], kept: [], finished: [], unfinished: [] };
  const dir = intentDir(storeRoot);
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.json')).sort();
  for (const file of files) {
    const path = join(dir, file);
    const { writes, operation } = parseIntent(await readFile(path, 'utf8').catch(() => ''));
    const dirs = new ContainedDirs(workingDirs);
    try {
      for (const w of writes) await cleanUpOne(dirs, w, report);
      if (operation && store) await finishInterruptedOperation(dirs, store, operation, writes, report);
      await dirs.sync();
    } finally {
      await dirs.close();
    }
    await rm(path, { force: true });
  }
  return report;
}

async function cleanUpOne(dirs: ContainedDirs, w: IntendedWrite, report: RecoveryReport): Promise<void> {
  if (!TEMP_NAME.test(w.names.tmp) || !TEMP_NAME.test(w.names.aside)) return;
  const pinned = await dirs.parentOf(w.absPath, false).catch(() => undefined);
  if (!pinned) return;
  const tmp = pinned.entry(Buffer.from(w.names.tmp));
  const aside = pinned.entry(Buffer.from(w.names.aside));
  const target = pinned.entry(encodePathBytes(basename(w.absPath)));
  const asideStat = await lstatOrUndefined(aside);
  const tmpStat = await lstatOrUndefined(tmp);
  if (tmpStat) {
    // Ours, unless a rollback had taken a version someone saved off the name into it: then the aside exists too and the content is not ours.
    if (!asideStat || (await blobIdOf(tmp, tmpStat)) === w.writtenOid) {
      await unlink(tmp);
      report.removed++;
    } else {
      report.kept.push(`${dirname(w.absPath)}/${w.names.tmp}`);
    }
  }
  if (!asideStat) return;
  const targetStat = await lstatOrUndefined(target);
  if (!targetStat) {
    await link(aside, target);
    await unlink(aside);
    report.restored.push(w.absPath);
    return;
  }
  if (targetStat.ino === asideStat.ino && targetStat.dev === asideStat.dev) {
    // A second name of the file in place (a rollback had put it back): only the name goes.
    await unlink(aside);
    report.removed++;
    return;
  }
  // Moved aside but already replaced: both versions it can be are recorded (the safety checkpoint, or what the operation wrote).
  const oid = await blobIdOf(aside, asideStat);
  if (oid === w.expectedOid || oid === w.writtenOid) {
    await unlink(aside);
    report.removed++;
  } else {
    report.kept.push(`${dirname(w.absPath)}/${w.names.aside}`);
  }
}

async function blobIdOf(path: string | Buffer, st: BigIntStats): Promise<string> {
  const content = st.isSymbolicLink() ? Buffer.from(await readlink(path, { encoding: 'buffer' })) : await readFile(path);
  return hashObject('blob', content);
}

function parseIntent(text: string): { writes: IntendedWrite[]; operation?: IntentOperation } {
  try {
    const parsed = JSON.parse(text) as { writes?: unknown; operation?: unknown };
    if (!Array.isArray(parsed.writes)) return { writes: [] };
    const writes = parsed.writes.filter(
      (w): w is IntendedWrite =>
        typeof w === 'object' &&
        w !== null &&
        typeof (w as IntendedWrite).absPath === 'string' &&
        typeof (w as IntendedWrite).names?.tmp === 'string' &&
        typeof (w as IntendedWrite).names?.aside === 'string',
    );
    const op = parsed.operation as Partial<IntentOperation> | undefined;
    const operation = op && typeof op.sessionId === 'string' && typeof op.id === 'string' ? (op as IntentOperation) : undefined;
    return { writes, ...(operation ? { operation } : {}) };
  } catch {
    // A torn intent was written before any file was touched: nothing to recover.
    return { writes: [] };
  }
}

function intentDir(storeRoot: string): string {
  return join(storeRoot, 'operations-in-progress');
}
