/**
 * Saves racing an operation's swap, many rounds per way of saving: a second
 * process saves the file at an exact point of the swap (the server pauses
 * there; the process watches for the moment), the revert stops, and the
 * file must be what the save would have made of it without the operation.
 * Prints, per scenario, the rounds, how many stopped with -32010, and the
 * bytes lost (must be 0).
 *
 * - append, rewrite, rename, chunked: the save lands after the check, before
 *   the replace;
 * - lines: a writer opens the file there and appends lines across the rest
 *   of the operation, keeping it open;
 * - held: a writer opens the file there and appends only once it was
 *   replaced (the end-of-operation check must find it);
 * - aside-rewrite, aside-rename: the save lands while the name is absent,
 *   between the move and the link (the link must not overwrite it; the
 *   version before is kept beside it);
 * - dirswap: a directory is swapped for a symlink after the revert wrote in
 *   it; the rollback must put back every file written.
 *
 *   npm run bench -- save-races [--rounds 200] [--size 1048576] [--pause 100] [--only append,lines]
 */
import { mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { changesetUriTemplate, expandChangesetUri } from '../../protocol/index.js';
import { ChangesetService } from '../../server/service.js';
import { Saver, type SaveCommand } from '../../test/helpers/saver.js';
import { BenchClient } from '../common/bench-client.js';
import { git } from '../common/workspace.js';

const argv = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : fallback;
};
const ROUNDS = Number(option('rounds', '200'));
const SIZE = Number(option('size', String(1 << 20)));
const ONLY = option('only', '').split(',').filter(Boolean);
/** How long the server pauses at the moment a save lands: long enough for the saving process to be scheduled on a loaded machine. */
const PAUSE_MS = Number(option('pause', '100'));

const PAUSE_BEFORE_REPLACE = 'CHANGESET_SERVER_TEST_PAUSE_BEFORE_REPLACE_MS';
const PAUSE_WHILE_ASIDE = 'CHANGESET_SERVER_TEST_PAUSE_WHILE_ASIDE_MS';
const PAUSE_BETWEEN_WRITES = 'CHANGESET_SERVER_TEST_PAUSE_BETWEEN_WRITES_MS';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const work = realpathSync(mkdtempSync(join(tmpdir(), 'bench-save-races-')));
const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir: join(work, 'state'), log: () => undefined });
const { url } = await service.start();
const client = await BenchClient.connect(url, 'save-races');
const saver = new Saver(join(root, 'test', 'operations', 'processes', 'saver.mjs'));
let sessions = 0;

/** A repository whose turn t1 wrote `turn`; returns it and the turn changeset. */
async function workspace(files: Record<string, string>, turn: Record<string, string>): Promise<{ repo: string; turnUri: string }> {
  const sid = `race${++sessions}`;
  const repo = join(work, sid);
  mkdirSync(repo);
  git(repo, ['init', '-q', '-b', 'main']);
  write(repo, files);
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '-m', 'initial']);
  const session = `ahp-session:/${sid}`;
  await client.request('createSession', { channel: session, workingDirectory: pathToFileURL(repo).href });
  await client.request('harness/turnStarted', { channel: session, turnId: 't1' });
  write(repo, turn);
  await client.request('harness/turnEnded', { channel: session, turnId: 't1' });
  return { repo, turnUri: expandChangesetUri(changesetUriTemplate(sid, 'turn'), { turnId: 't1' }) };
}

function write(repo: string, files: Record<string, string>): void {
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(join(repo, rel)), { recursive: true });
    writeFileSync(join(repo, rel), content);
  }
}

/** The revert's error code and message, or `ok` when it completed. */
async function revert(turnUri: string): Promise<{ code?: number; message: string }> {
  try {
    await client.request('invokeChangesetOperation', { channel: turnUri, operationId: 'revert' });
    return { message: 'ok' };
  } catch (error) {
    const text = (error as Error).message;
    return JSON.parse(text.slice(text.indexOf(': ') + 2)) as { code: number; message: string };
  }
}

/** Bytes of `expected` missing from `actual`: all of it past the first difference. */
function lost(expected: string, actual: string): number {
  if (expected === actual) return 0;
  let i = 0;
  while (i < expected.length && i < actual.length && expected[i] === actual[i]) i++;
  return Buffer.byteLength(expected.slice(i));
}

const temps = (dir: string) => readdirSync(dir).filter((n) => n.startsWith('.changeset-'));

interface Tally {
  rounds: number;
  /** Rounds in which the saving process, not scheduled in time, missed the moment (not counted as rounds). */
  missed: number;
  stopped: number;
  lost: number;
  kept: number;
  note: string;
}

/** A save style landing after the check, before the replace; `wouldHave` is the file the save alone makes. */
async function beforeReplace(
  name: string,
  cmd: (path: string, round: number) => SaveCommand,
  wouldHave: (before: string, written: string) => string,
): Promise<Tally> {
  const before = `${name}: earlier content\n`.repeat(Math.ceil(SIZE / (name.length + 17)));
  const { repo, turnUri } = await workspace({ 'a.txt': 'base\n' }, { 'a.txt': before });
  const path = join(repo, 'a.txt');
  const tally: Tally = { rounds: 0, missed: 0, stopped: 0, lost: 0, kept: 0, note: '' };
  process.env[PAUSE_BEFORE_REPLACE] = String(PAUSE_MS);
  while (tally.rounds < ROUNDS) {
    const round = tally.rounds + tally.missed;
    writeFileSync(path, before);
    const saved = saver.run({ ...cmd(path, round), waitMs: 5_000 }).catch(() => undefined);
    const result = await revert(turnUri);
    const reply = await saved;
    if (!reply) {
      tally.missed++;
      continue;
    }
    const written = reply.written;
    tally.rounds++;
    if (result.code === -32010) tally.stopped++;
    tally.lost += lost(wouldHave(before, written!), readFileSync(path, 'utf8'));
    tally.kept += temps(repo).length;
  }
  delete process.env[PAUSE_BEFORE_REPLACE];
  return tally;
}

/** A save creating the file while its name is absent: it must stay, and the version before must be kept beside it. */
async function whileAside(style: 'rewrite' | 'rename'): Promise<Tally> {
  const before = `aside ${style}: earlier content\n`.repeat(Math.ceil(SIZE / 30));
  const { repo, turnUri } = await workspace({ 'a.txt': 'base\n' }, { 'a.txt': before });
  const path = join(repo, 'a.txt');
  const tally: Tally = { rounds: 0, missed: 0, stopped: 0, lost: 0, kept: 0, note: 'version before kept beside the save, as the error says' };
  process.env[PAUSE_WHILE_ASIDE] = String(PAUSE_MS);
  while (tally.rounds < ROUNDS) {
    const round = tally.rounds + tally.missed;
    writeFileSync(path, before);
    const data = `${style} save ${round}\n`;
    const saved = saver.run({ style, path, when: 'aside', data, waitMs: 5_000 }).catch(() => undefined);
    const result = await revert(turnUri);
    if (!(await saved)) {
      tally.missed++;
      for (const n of temps(repo)) rmSync(join(repo, n));
      continue;
    }
    tally.rounds++;
    if (result.code === -32010) tally.stopped++;
    tally.lost += lost(data, readFileSync(path, 'utf8'));
    const kept = temps(repo);
    tally.kept += kept.length;
    const keptBefore = kept.some((n) => readFileSync(join(repo, n), 'utf8') === before);
    if (!keptBefore) tally.lost += Buffer.byteLength(before);
    for (const n of kept) rmSync(join(repo, n));
  }
  delete process.env[PAUSE_WHILE_ASIDE];
  return tally;
}

/** A directory swapped for a symlink after the revert wrote in it: every file written must be put back. */
async function dirSwap(): Promise<Tally> {
  const files = ['d0/f.txt', 'd1/f.txt', 'd1/g.txt', 'd2/f.txt'];
  const turn = Object.fromEntries(files.map((f) => [f, `${f} turn\n`]));
  const { repo, turnUri } = await workspace(Object.fromEntries(files.map((f) => [f, `${f} before\n`])), turn);
  const outside = join(work, 'outside');
  mkdirSync(outside);
  const tally: Tally = { rounds: 0, missed: 0, stopped: 0, lost: 0, kept: 0, note: 'lost = bytes of files not put back' };
  process.env[PAUSE_BETWEEN_WRITES] = '30';
  for (let round = 0; round < ROUNDS; round++) {
    write(repo, turn);
    const running = revert(turnUri);
    for (;;) {
      const now = (() => {
        try {
          return readFileSync(join(repo, 'd1/f.txt'), 'utf8');
        } catch {
          return '';
        }
      })();
      if (now === 'd1/f.txt before\n') break;
      await new Promise((r) => setTimeout(r, 1));
    }
    renameSync(join(repo, 'd1'), join(repo, 'd1.moved'));
    symlinkSync(outside, join(repo, 'd1'));
    const result = await running;
    tally.rounds++;
    if (result.code === -32010) tally.stopped++;
    for (const f of files) {
      const actual = readFileSync(join(repo, f.replace('d1/', 'd1.moved/')), 'utf8');
      tally.lost += lost(turn[f]!, actual);
    }
    tally.lost += readdirSync(outside).length;
    rmSync(join(repo, 'd1'));
    renameSync(join(repo, 'd1.moved'), join(repo, 'd1'));
  }
  delete process.env[PAUSE_BETWEEN_WRITES];
  return tally;
}

const scenarios: [string, () => Promise<Tally>][] = [
  [
    'append',
    () =>
      beforeReplace(
        'append',
        (path, r) => ({ style: 'append', path, when: 'replacing', data: `appended ${r}\n` }),
        (b, w) => b + w,
      ),
  ],
  [
    'rewrite',
    () =>
      beforeReplace(
        'rewrite',
        (path, r) => ({ style: 'rewrite', path, when: 'replacing', data: `rewritten ${r}\n` }),
        (_, w) => w,
      ),
  ],
  [
    'rename',
    () =>
      beforeReplace(
        'rename',
        (path, r) => ({ style: 'rename', path, when: 'replacing', data: `renamed over ${r}\n` }),
        (_, w) => w,
      ),
  ],
  [
    'chunked',
    () =>
      beforeReplace(
        'chunked',
        (path, r) => ({ style: 'chunked', path, when: 'replacing', data: `chunk ${r}\n`.repeat(2000), gapMs: 3 }),
        (_, w) => w,
      ),
  ],
  [
    'lines',
    () =>
      beforeReplace(
        'lines',
        (path, r) => ({ style: 'lines', path, when: 'replacing', count: 20, gapMs: 3, prefix: `round ${r}` }),
        (b, w) => b + w,
      ),
  ],
  [
    'held',
    () =>
      beforeReplace(
        'held',
        (path, r) => ({ style: 'lines', path, when: 'replacing', after: 'replaced', count: 10, gapMs: 3, prefix: `round ${r}` }),
        (b, w) => b + w,
      ),
  ],
  ['aside-rewrite', () => whileAside('rewrite')],
  ['aside-rename', () => whileAside('rename')],
  ['dirswap', dirSwap],
];

console.log(
  `machine: ${cpus().length} cores, node ${process.version}, load ${loadavg()[0]!.toFixed(2)}; ${ROUNDS} rounds per scenario, files of ${SIZE} bytes`,
);
console.log('scenario        rounds  missed  stopped  bytes lost  temp files left');
let total = 0;
try {
  for (const [name, run] of scenarios) {
    if (ONLY.length > 0 && !ONLY.includes(name)) continue;
    const t = performance.now();
    const tally = await run();
    total += tally.lost;
    const secs = ((performance.now() - t) / 1000).toFixed(0);
    console.log(
      `${name.padEnd(15)} ${String(tally.rounds).padStart(6)} ${String(tally.missed).padStart(7)} ${String(tally.stopped).padStart(8)} ${String(tally.lost).padStart(11)} ${String(tally.kept).padStart(16)}  ${secs} s${tally.note ? `  (${tally.note})` : ''}`,
    );
  }
} finally {
  saver.stop();
  client.ws.close();
  await service.stop();
  rmSync(work, { recursive: true, force: true });
}
console.log(`bytes lost in all: ${total}`);
process.exit(total === 0 ? 0 : 1);
