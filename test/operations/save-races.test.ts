import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri } from '../../protocol/index.js';
import { swapTestHooks } from '../../server/disk/file-swap.js';
import { executeTestHooks } from '../../server/operations/execute.js';
import type { TestClient } from '../helpers/client.js';
import { recordTurn } from '../helpers/changesets.js';
import { Saver, type SaveStyle } from '../helpers/saver.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { until } from '../helpers/wait.js';
import { blobId } from '../helpers/git-ids.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

/**
 * A second process saves a file at an exact point of the operation's swap
 * (the server, in this process, holds there until the save is done; the
 * process checks it is that moment by watching the file's directory), in
 * each way programs save. The user must end with the file they would have
 * had without the operation, and the operation stops with -32010.
 */

const temp = new TempDirs();
let svc: TestService;
let client: TestClient;
let saver: Saver;
let sessions = 0;

beforeAll(async () => {
  svc = await startTestService();
  client = await svc.client();
  saver = new Saver(join(import.meta.dirname, 'processes', 'saver.mjs'));
}, 60_000);

afterEach(() => {
  delete swapTestHooks.beforeReplace;
  delete swapTestHooks.whileAside;
  delete executeTestHooks.betweenWrites;
});

/** Holds the swap of `path` at that point until `act` is done (other files pass). */
const holdAt = (path: string, act: () => Promise<unknown>) => async (file: string) => {
  if (file === path) await act();
};

/** Whether the saver process holds `path` open (its descriptors, as the server finds writers). */
const saverHolds = (path: string) => readdirSync(`/proc/${saver.pid}/fd`).some((fd) => readlinkSync(`/proc/${saver.pid}/fd/${fd}`) === path);

afterAll(async () => {
  saver?.stop();
  await svc?.stop();
  temp.cleanup();
});

/** Earlier content big enough that losing it shows (about 400 kB). */
const earlier = (tag: string) => `${tag}: earlier content the turn wrote\n`.repeat(12_000);

/** A workspace whose turn t1 wrote `turn` over `files`; returns where it is and the turn's changeset. */
async function workspace(files: Record<string, string>, turn: Record<string, string>): Promise<{ repo: string; turnUri: string }> {
  const sid = `races${++sessions}`;
  const repo = makeRepo(temp.make(), files);
  const session = `ahp-session:/${sid}`;
  await client.request('createSession', { channel: session, workingDirectory: pathToFileURL(repo).href });
  await recordTurn(client, session, 't1', () => writeFiles(repo, turn));
  return { repo, turnUri: expandChangesetUri(changesetUriTemplate(sid, 'turn'), { turnId: 't1' }) };
}

const revert = (turnUri: string) => client.requestError('invokeChangesetOperation', { channel: turnUri, operationId: 'revert' }, { timeoutMs: 30_000 });

/** True when the store's safety checkpoints hold this content: what `undo` brings back. */
function inSafetyCheckpoints(content: string): boolean {
  const id = blobId(content);
  const stores: string[] = [];
  const find = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory() && e.name === 'shadow.git') stores.push(join(dir, e.name));
      else if (e.isDirectory()) find(join(dir, e.name));
    }
  };
  find(svc.stateDir);
  return stores.some((gitDir) => {
    const refs = spawnSync('git', ['--git-dir', gitDir, 'for-each-ref', '--format=%(objectname) %(refname)', 'refs/changeset-server/'], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter((line) => line.includes('/safety/'))
      .map((line) => line.slice(0, 40));
    const objects = spawnSync('git', ['--git-dir', gitDir, 'rev-list', '--objects', ...refs], { encoding: 'utf8', maxBuffer: 1 << 28 }).stdout;
    return objects.split('\n').some((line) => line.startsWith(id));
  });
}

/** Our temporary files left in a directory. */
const leftovers = (dir: string) => readdirSync(dir).filter((n) => n.startsWith('.changeset-'));

describe('a save landing between the check and the replace keeps every byte', () => {
  const styles: { style: SaveStyle; expect: (before: string, saved: string) => string }[] = [
    { style: 'append', expect: (before, saved) => before + saved },
    { style: 'rewrite', expect: (_, saved) => saved },
    { style: 'rename', expect: (_, saved) => saved },
    { style: 'chunked', expect: (_, saved) => saved },
  ];
  for (const { style, expect: wouldHave } of styles) {
    it(`${style}: the file ends as it would have without the operation, which stops with -32010 (2 rounds)`, async () => {
      const before = earlier(style);
      const { repo, turnUri } = await workspace({ 'a.txt': 'base\n' }, { 'a.txt': before });
      const path = join(repo, 'a.txt');
      for (let round = 0; round < 2; round++) {
        writeFiles(repo, { 'a.txt': before });
        const data = `${style} save ${round}\n`.repeat(style === 'chunked' ? 400 : 1);
        let saved: Promise<unknown> | undefined;
        swapTestHooks.beforeReplace = holdAt(path, () => (saved = saver.run({ style, path, when: 'replacing', data, gapMs: 5 })));
        const error = await revert(turnUri);
        expect(saved, `round ${round}: the save at the replace`).toBeDefined();
        await saved;
        expect(error.code).toBe(-32010);
        expect(error.message).toBe('Stopped: a.txt changed while the operation ran (it was saved while being replaced); nothing had been written yet');
        const now = readFileSync(path, 'utf8');
        expect(now === wouldHave(before, data), `round ${round}: a.txt is not what the save made of it`).toBe(true);
        // The version the save replaced: on disk, or stored by the safety checkpoint taken before the write.
        expect(now.startsWith(before) || inSafetyCheckpoints(before), `round ${round}: the earlier content is gone`).toBe(true);
        expect(leftovers(repo)).toEqual([]);
      }
    });
  }
});

describe('a save landing while the name is absent is never overwritten', () => {
  it('rewrite and rename: the save stays, and the version before it is kept beside it under the name the error gives', async () => {
    const before = earlier('aside');
    const { repo, turnUri } = await workspace({ 'a.txt': 'base\n' }, { 'a.txt': before });
    const path = join(repo, 'a.txt');
    for (const style of ['rewrite', 'rename', 'rewrite', 'rename'] as const) {
      writeFiles(repo, { 'a.txt': before });
      const data = `${style} save while aside\n`;
      let saved: Promise<unknown> | undefined;
      swapTestHooks.whileAside = holdAt(path, () => (saved = saver.run({ style, path, when: 'aside', data })));
      const error = await revert(turnUri);
      expect(saved, 'the save while aside').toBeDefined();
      await saved;
      expect(error.code).toBe(-32010);
      expect(error.message).toMatch(
        /^Stopped: a\.txt changed while the operation ran \(it was saved while being replaced; the version before that is kept as .*\.changeset-[0-9a-f]{12}\.old\)/,
      );
      expect(readFileSync(path, 'utf8')).toBe(data);
      const kept = leftovers(repo);
      expect(kept).toHaveLength(1);
      expect(readFileSync(join(repo, kept[0]!), 'utf8') === before).toBe(true);
      rmSync(join(repo, kept[0]!));
    }
  });

  it('append (the moment that remains): the appended bytes start a new file, and the earlier content is kept beside it, named', async () => {
    const before = earlier('append aside');
    const { repo, turnUri } = await workspace({ 'a.txt': 'base\n' }, { 'a.txt': before });
    const path = join(repo, 'a.txt');
    let saved: Promise<unknown> | undefined;
    swapTestHooks.whileAside = holdAt(path, () => (saved = saver.run({ style: 'append', path, when: 'aside', data: 'appended\n' })));
    const error = await revert(turnUri);
    expect(saved, 'the save while aside').toBeDefined();
    await saved;
    expect(error.message).toContain('the version before that is kept as');
    expect(readFileSync(path, 'utf8')).toBe('appended\n');
    const kept = leftovers(repo);
    expect(kept).toHaveLength(1);
    expect(readFileSync(join(repo, kept[0]!), 'utf8') === before).toBe(true);
  });
});

describe('a writer that keeps the file open loses nothing', () => {
  it('refuses up front, naming the process, when another process holds a file open for writing; nothing is written', async () => {
    const { repo, turnUri } = await workspace({ 'a.txt': 'a\n', 'b.txt': 'b\n' }, { 'a.txt': 'A\n', 'b.txt': 'B\n' });
    await saver.run({ style: 'hold', path: join(repo, 'b.txt') });
    try {
      const error = await revert(turnUri);
      expect(error.code).toBe(-32010);
      expect(error.message).toBe(`Nothing was written: 1 conflict: b.txt (held open for writing by node (pid ${saver.pid}))`);
      expect([readFileSync(join(repo, 'a.txt'), 'utf8'), readFileSync(join(repo, 'b.txt'), 'utf8')]).toEqual(['A\n', 'B\n']);
    } finally {
      await saver.run({ style: 'release' });
    }
  });

  it('lines appended across the operation by a writer that opened the file mid-way all end up in the file (2 rounds)', async () => {
    const before = earlier('lines');
    const { repo, turnUri } = await workspace({ 'a.txt': 'base\n' }, { 'a.txt': before });
    const path = join(repo, 'a.txt');
    for (let round = 0; round < 2; round++) {
      writeFiles(repo, { 'a.txt': before });
      let lines: Promise<{ written?: string }> | undefined;
      // Held at the replace until the writer has the file open and appended its first ten lines; the other 30 come after.
      swapTestHooks.beforeReplace = holdAt(path, async () => {
        lines = saver.run({ style: 'lines', path, when: 'replacing', count: 40, gapMs: 8, prefix: `round ${round}` });
        await until(() => statSync(path).size >= Buffer.byteLength(before) + 10 * `round ${round} line 0\n`.length, 'ten lines appended');
      });
      const error = await revert(turnUri);
      expect(lines, `round ${round}: the writer opened the file mid-way`).toBeDefined();
      const { written } = await lines!;
      expect(error.code).toBe(-32010);
      expect(readFileSync(path, 'utf8') === before + written!, `round ${round}: appended lines lost`).toBe(true);
      expect(leftovers(repo)).toEqual([]);
    }
  });

  it('a writer that holds the replaced file open when the operation ends: everything is put back, with its lines, and the error names it', async () => {
    const before = earlier('held');
    const { repo, turnUri } = await workspace({ 'a.txt': 'base\n' }, { 'a.txt': before });
    const path = join(repo, 'a.txt');
    // Opened after the up-front check (the replace held until it is), first written to only once the file was replaced, and
    // still open when the operation ends.
    let lines: Promise<{ written?: string; pid?: number }> | undefined;
    swapTestHooks.beforeReplace = holdAt(path, async () => {
      lines = saver.run({ style: 'lines', path, when: 'replacing', after: 'replaced', count: 30, gapMs: 10, prefix: 'held', keepOpen: true });
      await until(() => saverHolds(path), 'the writer to open the file');
    });
    const error = await revert(turnUri);
    expect(lines, 'the writer opened the file mid-way').toBeDefined();
    const { written, pid } = await lines!;
    await saver.run({ style: 'release' });
    expect(error.code).toBe(-32010);
    expect(error.message).toBe(
      `Stopped: a.txt was held open for writing by node (pid ${pid}) while the operation ran; the 1 file already written was put back`,
    );
    expect(readFileSync(path, 'utf8') === before + written!).toBe(true);
    expect(leftovers(repo)).toEqual([]);
  });

  it('lines written to a replaced file by a writer that closed it before the operation ended are put back with it', async () => {
    const [beforeA, beforeB] = [earlier('a'), earlier('b')];
    const { repo, turnUri } = await workspace({ 'a.txt': 'a\n', 'b.txt': 'b\n' }, { 'a.txt': beforeA, 'b.txt': beforeB });
    const path = join(repo, 'a.txt');
    let lines: Promise<{ written?: string }> | undefined;
    // a.txt's replace held until the writer has it open; b.txt's write held until the writer has written and closed it.
    swapTestHooks.beforeReplace = holdAt(path, async () => {
      lines = saver.run({ style: 'lines', path, when: 'replacing', after: 'replaced', count: 3, gapMs: 5, prefix: 'late' });
      await until(() => saverHolds(path), 'the writer to open the file');
    });
    executeTestHooks.betweenWrites = async () => {
      await lines;
    };
    const error = await revert(turnUri);
    expect(lines, 'the writer opened the file mid-way').toBeDefined();
    const { written } = await lines!;
    expect(error.message).toBe(
      'Stopped: a.txt changed while the operation ran (it was written to while being replaced); the 2 files already written were put back',
    );
    expect(readFileSync(join(repo, 'a.txt'), 'utf8') === beforeA + written!).toBe(true);
    expect(readFileSync(join(repo, 'b.txt'), 'utf8') === beforeB).toBe(true);
  });
});

describe('a rollback puts back through the directories it wrote in', () => {
  it('every file written before a directory was swapped for a symlink is put back, in that directory (2 rounds)', async () => {
    const files = ['d0/f.txt', 'd0/g.txt', 'd1/f.txt', 'd1/g.txt', 'd2/f.txt'];
    const { repo, turnUri } = await workspace(
      Object.fromEntries(files.map((f) => [f, `${f} before\n`])),
      Object.fromEntries(files.map((f) => [f, `${f} turn\n`])),
    );
    const outside = temp.make('outside-');
    const read = (rel: string) => readFileSync(join(repo, rel), 'utf8');
    for (let round = 0; round < 2; round++) {
      // Once the revert has written in d1, before its next write, d1 becomes a link to a directory outside.
      let swapped = false;
      executeTestHooks.betweenWrites = async () => {
        if (swapped || read('d1/f.txt') !== 'd1/f.txt before\n') return;
        renameSync(join(repo, 'd1'), join(repo, 'd1.moved'));
        symlinkSync(outside, join(repo, 'd1'));
        swapped = true;
      };
      const error = await revert(turnUri);
      expect(swapped, `round ${round}: d1 swapped mid-revert`).toBe(true);
      expect(error.code).toBe(-32010);
      expect(error.message).toBe(
        `Stopped: d1/g.txt ${join(repo, 'd1')} was moved or replaced while the operation ran; the 3 files already written were put back`,
      );
      expect(readdirSync(outside)).toEqual([]);
      expect([read('d0/f.txt'), read('d0/g.txt'), read('d1.moved/f.txt'), read('d1.moved/g.txt'), read('d2/f.txt')]).toEqual(files.map((f) => `${f} turn\n`));
      expect(leftovers(join(repo, 'd1.moved'))).toEqual([]);
      rmSync(join(repo, 'd1'));
      renameSync(join(repo, 'd1.moved'), join(repo, 'd1'));
    }
    expect(existsSync(join(repo, 'd1', 'f.txt'))).toBe(true);
  });
});
