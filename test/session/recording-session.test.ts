import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatState } from '../../protocol/index.js';
import { ChannelStore } from '../../server/channels/index.js';
import { RecordingSession } from '../../server/session/recording-session.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
const sessions: RecordingSession[] = [];
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.dispose()));
  temp.cleanup();
});

async function open(dirs: string[]): Promise<{ session: RecordingSession; channels: ChannelStore }> {
  const channels = new ChannelStore();
  const session = await RecordingSession.create({ workingDirectories: dirs, stateDir: temp.make('state-'), channels });
  sessions.push(session);
  return { session, channels };
}

describe('RecordingSession', () => {
  it('records a turn: summary, change entries and the chat turn list', async () => {
    const repo = makeRepo(temp.make(), {
      'src/a.ts': 'one\ntwo\nthree\n',
      'src/b.ts': 'keep\n',
      'old.txt': 'a file that will be renamed\nwith some lines\nof content\n',
      '.gitignore': 'secret.env\n',
    });
    writeFiles(repo, { 'secret.env': 'TOKEN=1\n' });
    const { session } = await open([repo]);

    const turn = await session.startTurn({ id: 'turn/1 ?é', message: 'Refactor a' });
    expect(await turn.beforeEdit(['src/a.ts', 'secret.env'], { tool: 'Edit' })).toEqual([join(repo, 'src/a.ts'), join(repo, 'secret.env')]);
    writeFiles(repo, { 'src/a.ts': 'one\n2\nthree\nfour\n', 'src/new.ts': 'x\n', 'secret.env': 'TOKEN=2\n' });
    rmSync(join(repo, 'src/b.ts'));
    writeFileSync(join(repo, 'renamed.txt'), readFileSync(join(repo, 'old.txt')));
    rmSync(join(repo, 'old.txt'));
    const summary = await turn.end();

    expect(summary.files.map((f) => [f.display, f.added, f.deleted])).toEqual([
      ['renamed.txt', 0, 0],
      ['secret.env', 1, 1],
      ['src/a.ts', 2, 1],
      ['src/b.ts', 0, 1],
      ['src/new.ts', 1, 0],
    ]);
    expect(summary.total).toBe(5);
    expect(summary.added).toBe(4);
    expect(summary.deleted).toBe(3);
    expect(summary.snapshot?.before).toMatch(/^[0-9a-f]{40}$/);

    const record = session.turn('turn/1 ?é')!;
    const byPath = new Map(record.entries!.map((e) => [e.path, e]));
    expect(byPath.get('src/a.ts')).toMatchObject({ tool: 'Edit', operation: 'modify', modeBefore: '100644', modeAfter: '100644' });
    expect(byPath.get('src/new.ts')).toMatchObject({ tool: 'shell', operation: 'create' });
    expect(byPath.get('renamed.txt')).toMatchObject({ operation: 'rename', oldPath: 'old.txt' });
    expect(byPath.get('secret.env')?.sha256Before).toMatch(/^[0-9a-f]{64}$/);
    expect(record.counts).toMatchObject({ creates: 1, modifies: 2, deletes: 1, renames: 1 });

    const chat = session.chatState as ChatState;
    expect(chat.turns.map((t) => [t.id, t.state, t.message.text])).toEqual([['turn/1 ?é', 'complete', 'Refactor a']]);
    // The turn's response in the chat lists what it changed.
    expect(chat.turns[0]!.responseParts).toEqual([
      {
        kind: 'markdown',
        id: 'changes',
        content: 'Changed 5 files (+4 −3):\n- `renamed.txt` +0 −0\n- `secret.env` +1 −1\n- `src/a.ts` +2 −1\n- `src/b.ts` +0 −1\n- `src/new.ts` +1 −0',
      },
    ]);
  });

  it('records a turn started over an active one as cancelled, and rejects a mismatched turn id', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const { session } = await open([repo]);
    await session.startTurn({ id: 't1' });
    writeFiles(repo, { 'a.txt': 'b\n' });
    await session.startTurn({ id: 't2' });
    await expect(session.endTurn('t1')).rejects.toThrow(/does not match the active turn "t2"/);
    await session.endTurn('t2');
    expect(session.chatState.turns.map((t) => [t.id, t.state])).toEqual([
      ['t1', 'cancelled'],
      ['t2', 'complete'],
    ]);
    expect(session.turn('t1')!.summary!.files.map((f) => f.display)).toEqual(['a.txt']);
  });

  // Every turn reads the repository (its index, config, objects) and writes its store beside it: `npm test` records 10
  // turns, each of the 5 new files written twice over; `npm run soak` records 50 (GIT_UNTOUCHED_TURNS).
  const turns = Number(process.env['GIT_UNTOUCHED_TURNS'] ?? 10);
  it(`leaves the repository's .git byte-identical after ${turns} turns`, async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n', 'src/b.txt': 'b\n' });
    const before = hashTree(join(repo, '.git'));
    const { session } = await open([repo]);
    for (let i = 0; i < turns; i++) {
      const turn = await session.startTurn({ id: `t${i}` });
      await turn.beforeEdit(['a.txt'], { tool: 'Edit' });
      writeFiles(repo, { 'a.txt': `a ${i}\n`, [`src/new-${i % 5}.txt`]: `${i}\n` });
      await turn.end();
    }
    await session.dispose();
    expect(hashTree(join(repo, '.git'))).toEqual(before);
  }, 120_000);

  it('lets two sessions of one process record the same directory', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const channels = new ChannelStore();
    const stateDir = temp.make('state-');
    const one = await RecordingSession.create({ workingDirectories: [repo], stateDir, channels });
    const two = await RecordingSession.create({ workingDirectories: [repo], stateDir, channels });
    sessions.push(one, two);
    const turn = await two.startTurn({ id: 't' });
    writeFiles(repo, { 'a.txt': 'b\n' });
    expect((await turn.end()).files.map((f) => f.display)).toEqual(['a.txt']);
    await one.dispose();
    const again = await two.startTurn({ id: 'u' });
    writeFiles(repo, { 'a.txt': 'c\n' });
    expect((await again.end()).files.map((f) => f.display)).toEqual(['a.txt']);
  });

  it('does not list a path whose content is back to what it was', async () => {
    const dir = temp.make();
    writeFiles(dir, { 'a.txt': 'same\n' });
    const { session } = await open([dir]);
    const turn = await session.startTurn();
    writeFiles(dir, { 'a.txt': 'changed\n' });
    writeFiles(dir, { 'a.txt': 'same\n' });
    expect((await turn.end()).files).toEqual([]);
  });
});

/** Every file under a directory with its mode, size, mtime and content hash. */
function hashTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p);
      else out[p] = `${st.mode} ${st.size} ${st.mtimeMs} ${createHash('sha1').update(readFileSync(p)).digest('hex')}`;
    }
  };
  walk(dir);
  return out;
}

describe('RecordingSession when things go wrong', () => {
  it('abandons only the failing turn, with a warning, and records the next one', async () => {
    const dir = temp.make();
    writeFiles(dir, { 'a.txt': 'a\n' });
    const { session } = await open([dir]);
    const warnings: string[] = [];
    session.onWarning((w) => warnings.push(w));
    const broken = await session.startTurn({ id: 'broken' });
    rmSync(dir, { recursive: true });
    const summary = await broken.end();
    expect(summary.files).toEqual([]);
    expect(session.turn('broken')!.state).toBe('error');
    expect(warnings.join('\n')).toContain('recording turn "broken" failed');
    writeFiles(dir, { 'a.txt': 'a\n' });
    const next = await session.startTurn({ id: 'next' });
    writeFiles(dir, { 'a.txt': 'b\n' });
    expect((await next.end()).files.map((f) => f.display)).toEqual(['a.txt']);
    expect(session.chatState.turns.map((t) => [t.id, t.state])).toEqual([
      ['broken', 'error'],
      ['next', 'complete'],
    ]);
  });

  it('does not capture temporary-directory paths outside the working directories', async () => {
    const dir = temp.make();
    const outsideTmp = temp.make('scratch-');
    writeFiles(dir, { 'a.txt': 'a\n' });
    writeFiles(outsideTmp, { 'scratch.txt': 'x\n' });
    const { session } = await open([dir]);
    const turn = await session.startTurn();
    expect(await turn.beforeEdit([join(outsideTmp, 'scratch.txt'), 'a.txt'])).toEqual([join(dir, 'a.txt')]);
    await turn.end();
  });
});
