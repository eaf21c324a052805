import { spawn, spawnSync, type ChildProcessByStdio } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { createInterface, type Interface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri } from '../../protocol/index.js';
import { executeTestHooks } from '../../server/operations/execute.js';
import type { TestClient } from '../helpers/client.js';
import { recordTurn, subscribeReady } from '../helpers/changesets.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { blobId } from '../helpers/git-ids.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

/**
 * The guarantee: every version of a file that existed on disk when the
 * server touched it is on disk or reachable by `undo`. A second process
 * saves files in and out of an operation's scope at random moments while
 * revert, restore and undo of 200 files run.
 */
/**
 * Rounds here: 3 cross every operation with saves in and out of its scope,
 * in both save styles (each race saves both ways): a revert with saves only
 * outside it (it runs to the end), a restore with saves inside and outside
 * at a random moment, and a revert whose saves wait for its first write, so
 * that they land in the middle of its writes and stop it part-way in every
 * run, not by luck; each followed by an undo at a random moment. `npm run
 * soak` runs 200 (`CONCURRENT_WRITER_ROUNDS`); in every fourth from the third
 * on, the saves land mid-write.
 */
const ROUNDS = Math.max(3, Number(process.env['CONCURRENT_WRITER_ROUNDS'] ?? 3));
const IN_SCOPE = Array.from({ length: 200 }, (_, i) => `d${i % 10}/f${String(i).padStart(3, '0')}.txt`);
const OUT_OF_SCOPE = Array.from({ length: 20 }, (_, i) => `other/g${i}.txt`);
/** The operation writes its files in path order: the first it writes, and the last twenty (where mid-write saves go). */
const IN_WRITE_ORDER = [...IN_SCOPE].sort();
const FIRST_WRITTEN = IN_WRITE_ORDER[0]!;
const WRITTEN_LAST = IN_WRITE_ORDER.slice(-20);
const PAUSE_ENV = 'CHANGESET_SERVER_TEST_PAUSE_BETWEEN_WRITES_MS';
const SID = 'race';
const SESSION = `ahp-session:/${SID}`;
const TURN = expandChangesetUri(changesetUriTemplate(SID, 'turn'), { turnId: 't1' });
const SESSION_CS = changesetUriTemplate(SID, 'session');

const temp = new TempDirs();
let svc: TestService;
let client: TestClient;
let repo: string;
let outside: string;
let writer: ChildProcessByStdio<Writable, Readable, null>;
let writerLines: Interface;

const turnVersion = (rel: string) => `turn version of ${rel}\n${'x'.repeat(600)}\n`;

beforeAll(async () => {
  // A pause between two writes spreads an operation's write phase over a few hundred milliseconds, where saves can land.
  process.env[PAUSE_ENV] = '1';
  svc = await startTestService();
  client = await svc.client();
  repo = makeRepo(temp.make(), Object.fromEntries([...IN_SCOPE, ...OUT_OF_SCOPE].map((rel) => [rel, `original ${rel}\n`])));
  outside = temp.make('outside-');
  writeFiles(outside, { 'private.txt': 'not the workspace\n' });
  await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
  await recordTurn(client, SESSION, 't1', () => writeFiles(repo, Object.fromEntries(IN_SCOPE.map((rel) => [rel, turnVersion(rel)]))));
  await subscribeReady(client, TURN);
  await subscribeReady(client, SESSION_CS);
  writer = spawn(process.execPath, [join(import.meta.dirname, 'processes', 'concurrent-writer.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
  writerLines = createInterface({ input: writer.stdout });
}, 60_000);

afterAll(async () => {
  writer?.kill();
  await svc?.stop();
  temp.cleanup();
  delete process.env[PAUSE_ENV];
});

/**
 * Runs the writer once and resolves with the versions it saved, in order. With `startWhen`, the delay counts from
 * the moment that file stops holding `differsFrom`.
 */
function race(
  tag: string,
  delayMs: number,
  targets: readonly string[],
  startWhen?: { path: string; differsFrom: string },
): Promise<{ path: string; content: string }[]> {
  const files = targets.map((rel) => join(repo, rel));
  const saved: { path: string; content: string }[] = [];
  return new Promise((resolve) => {
    const onLine = (line: string) => {
      const msg = JSON.parse(line) as { done?: true; path: string; content: string };
      if (!msg.done) return void saved.push(msg);
      writerLines.off('line', onLine);
      resolve(saved);
    };
    writerLines.on('line', onLine);
    writer.stdin.write(`${JSON.stringify({ files, delayMs, count: 8, maxGapMs: 15, tag, startWhen })}\n`);
  });
}

/** Every blob the safety checkpoints hold: what `undo` can bring back. */
function safetyBlobs(): Set<string> {
  const out = new Set<string>();
  const stores: string[] = [];
  const find = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      if (e.name === 'shadow.git') stores.push(join(dir, e.name));
      else find(join(dir, e.name));
    }
  };
  find(svc.stateDir);
  for (const gitDir of stores) {
    const refs = spawnSync('git', ['--git-dir', gitDir, 'for-each-ref', '--format=%(objectname) %(refname)', 'refs/changeset-server/'], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter((line) => line.includes('/safety/'))
      .map((line) => line.slice(0, 40));
    const objects = spawnSync('git', ['--git-dir', gitDir, 'rev-list', '--objects', '--missing=allow-any', ...refs], { encoding: 'utf8', maxBuffer: 1 << 28 });
    for (const line of objects.stdout.split('\n')) if (line) out.add(line.slice(0, 40));
  }
  return out;
}

/**
 * Invokes the operation while the writer saves `targets`: at a random moment, or (`midWrite`) right after the
 * operation's first write, into files it writes last.
 */
async function invokeRacing(operationId: string, channel: string, round: number, targets: readonly string[], midWrite = false): Promise<string> {
  const saves = midWrite
    ? race(`round ${round} ${operationId}`, 0, targets, { path: join(repo, FIRST_WRITTEN), differsFrom: turnVersion(FIRST_WRITTEN) })
    : race(`round ${round} ${operationId}`, Math.floor(Math.random() * 400), targets);
  // Mid-write, the operation holds after its first write until the saves are done: they land before it reaches the files they go to.
  if (midWrite) {
    executeTestHooks.betweenWrites = async (written) => {
      if (written === 1) await saves;
    };
  }
  const outcome = await client
    .request<{ message: string }>('invokeChangesetOperation', { channel, operationId }, { timeoutMs: 60_000 })
    .then(
      (r) => r.message,
      (e: Error) => `refused: ${e.message}`,
    )
    .finally(() => {
      delete executeTestHooks.betweenWrites;
    });
  const lastSaved = new Map<string, string>();
  for (const s of await saves) lastSaved.set(s.path, s.content);
  // Reading the store only when some saved version is not on disk keeps the rounds quick.
  let reachable: Set<string> | undefined;
  for (const [path, content] of lastSaved) {
    const onDisk = readFileSync(path, 'utf8') === content;
    if (!onDisk) reachable ??= safetyBlobs();
    // A revert never touches files its turn did not change; whatever any operation touches is on disk or in a safety checkpoint.
    const untouchable = operationId === 'revert' && path.includes('/other/');
    if (untouchable) expect(onDisk, `${path} after ${operationId} (${outcome})`).toBe(true);
    else expect(onDisk || reachable!.has(blobId(content)), `${path} lost after ${operationId} (${outcome})`).toBe(true);
  }
  return outcome;
}

describe('operations racing a second process that saves files', () => {
  it(
    `keeps every saved version on disk or reachable by undo over ${ROUNDS} rounds of revert, restore and undo, one stopped part-way by a save`,
    async () => {
      const outcomes: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        // Each round starts from the turn's end, so revert has its whole scope to write.
        writeFiles(repo, Object.fromEntries(IN_SCOPE.map((rel) => [rel, turnVersion(rel)])));
        const first = round % 2 === 0 ? 'revert' : 'restore-checkpoint';
        // Every fourth round the writer saves only files the revert does not name, so some operations run to the end.
        const targets = round % 4 === 0 ? OUT_OF_SCOPE : [...IN_SCOPE.slice(0, 60), ...OUT_OF_SCOPE];
        if (round % 4 === 2) {
          // Saves into files the revert writes last, once it has written its first: it is stopped part-way.
          const outcome = await invokeRacing(first, TURN, round, WRITTEN_LAST, true);
          expect(outcome, `round ${round}: the revert with saves landing mid-write`).toMatch(/^refused: .*Stopped: .* changed while the operation ran/);
          outcomes.push(outcome);
        } else outcomes.push(await invokeRacing(first, TURN, round, targets));
        outcomes.push(await invokeRacing('undo', SESSION_CS, round, targets));
      }
      expect(readdirSync(outside)).toEqual(['private.txt']);
      expect(readFileSync(join(outside, 'private.txt'), 'utf8')).toBe('not the workspace\n');
      const leftovers = spawnSync('find', [repo, '-name', '.changeset-*'], { encoding: 'utf8' }).stdout.trim();
      expect(leftovers).toBe('');
      // The race is real: some operations completed, and some were stopped or refused by a save.
      expect(outcomes.some((o) => !o.startsWith('refused'))).toBe(true);
      expect(outcomes.some((o) => o.startsWith('refused'))).toBe(true);
      expect(outcomes.some((o) => o.includes('changed while the operation ran'))).toBe(true);
      if (process.env.SHOW_OUTCOMES) console.log(outcomes.map((o) => o.slice(0, 90)).join('\n'));
    },
    60_000 + ROUNDS * 40_000,
  );
});
