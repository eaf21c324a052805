/**
 * Operations on names that are not UTF-8: revert, restore-checkpoint and
 * undo put back exactly the bytes of the file with the raw name, and never
 * create a file whose name was re-encoded (`caf\uFFFD.txt`).
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { beforeEach, describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri, type ChangesetState } from '../../protocol/index.js';
import type { TestClient } from '../helpers/client.js';
import { recordTurn as record, subscribeReady } from '../helpers/changesets.js';
import { serviceForEachTest } from '../helpers/service.js';
import { git, makeRepo, TempDirs } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
let client: TestClient;
let repo: string;
const SID = 'names';
const SESSION = `ahp-session:/${SID}`;
const SESSION_CS = changesetUriTemplate(SID, 'session');
const turnUri = (turnId: string) => expandChangesetUri(changesetUriTemplate(SID, 'turn'), { turnId });

/** `caf\xe9.txt` and friends: Latin-1 bytes, not UTF-8. */
const CAFE = [0x63, 0x61, 0x66, 0xe9, 0x2e, 0x74, 0x78, 0x74];
const NEW = [0x6e, 0x65, 0x77, 0x2d, 0xe9, 0x2e, 0x74, 0x78, 0x74];
const OLD = [0x6f, 0x6c, 0x64, 0x2d, 0xfe, 0x2e, 0x74, 0x78, 0x74];
const REPLACEMENT = Buffer.from('\uFFFD');

const at = (name: number[]): Buffer => Buffer.concat([Buffer.from(`${repo}/`), Buffer.from(name)]);
const read = (name: number[]): string => readFileSync(at(name), 'utf8');
const write = (name: number[], text: string): void => writeFileSync(at(name), text);
/** Every name in the working directory, as hex of its bytes (a re-encoded name would hold ef bf bd). */
const names = (): string[] =>
  readdirSync(Buffer.from(repo), { encoding: 'buffer' })
    .map((n) => n.toString('hex'))
    .filter((n) => n !== Buffer.from('.git').toString('hex'))
    .sort();
const hex = (...list: (number[] | string)[]): string[] => list.map((n) => Buffer.from(n as string).toString('hex')).sort();

function expectNoReencodedName(): void {
  for (const n of readdirSync(Buffer.from(repo), { encoding: 'buffer' })) expect(n.includes(REPLACEMENT)).toBe(false);
}

function invoke(channel: string, operationId: string, target?: unknown) {
  return client.request<{ message: string }>('invokeChangesetOperation', { channel, operationId, ...(target ? { target } : {}) }, { timeoutMs: 20_000 });
}

async function waitFor(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function undo(): Promise<string> {
  await subscribeReady(client, SESSION_CS);
  await waitFor(() => client.state<ChangesetState>(SESSION_CS)!.operations?.find((o) => o.id === 'undo')?.status === 'idle');
  return (await invoke(SESSION_CS, 'undo')).message;
}

serviceForEachTest(temp, (_s, c) => (client = c));
beforeEach(async () => {
  repo = makeRepo(temp.make(), { 'keep.txt': 'untouched\n' });
  write(CAFE, 'one\ntwo\nthree\n');
  write(OLD, 'old\n');
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '-m', 'latin-1 names']);
  await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
});

const recordTurn = (turnId: string, edit: () => void) => record(client, SESSION, turnId, edit);

describe('operations on names that are not UTF-8', () => {
  it('revert of a turn puts back the exact bytes under the raw names, and undo brings the turn back', async () => {
    await recordTurn('t1', () => {
      write(CAFE, 'one\nTWO\nthree\n');
      write(NEW, 'created\n');
      rmSync(at(OLD));
    });
    await subscribeReady(client, turnUri('t1'));

    expect((await invoke(turnUri('t1'), 'revert')).message).toBe('Reverted 3 files');
    expect(read(CAFE)).toBe('one\ntwo\nthree\n');
    expect(read(OLD)).toBe('old\n');
    expect(existsSync(at(NEW))).toBe(false);
    expect(names()).toEqual(hex(CAFE, OLD, 'keep.txt'));
    expectNoReencodedName();

    expect(await undo()).toBe('Undid the revert of turn 1: put back 3 files');
    expect(read(CAFE)).toBe('one\nTWO\nthree\n');
    expect(read(NEW)).toBe('created\n');
    expect(existsSync(at(OLD))).toBe(false);
    expect(names()).toEqual(hex(CAFE, NEW, 'keep.txt'));
    expectNoReencodedName();
  });

  it('revert of one file by its byte id touches only that file', async () => {
    await recordTurn('t1', () => {
      write(CAFE, 'one\nTWO\nthree\n');
      write(NEW, 'created\n');
    });
    const turn = await subscribeReady(client, turnUri('t1'));
    const id = `${pathToFileURL(repo).href}/caf%E9.txt`;
    expect(turn.files.map((f) => f.id)).toContain(id);
    await invoke(turnUri('t1'), 'revert', { kind: 'resource', resource: id });
    expect(read(CAFE)).toBe('one\ntwo\nthree\n');
    expect(read(NEW)).toBe('created\n');
    expectNoReencodedName();
  });

  it('restore-checkpoint puts the raw-named files back as they were at the turn start, and undo brings back the later state', async () => {
    await recordTurn('t1', () => write(CAFE, 'by t1\n'));
    await recordTurn('t2', () => {
      write(CAFE, 'by t2\n');
      write(NEW, 'made by t2\n');
      rmSync(at(OLD));
    });
    await subscribeReady(client, turnUri('t2'));

    await invoke(turnUri('t2'), 'restore-checkpoint');
    expect(read(CAFE)).toBe('by t1\n');
    expect(read(OLD)).toBe('old\n');
    expect(existsSync(at(NEW))).toBe(false);
    expect(names()).toEqual(hex(CAFE, OLD, 'keep.txt'));
    expectNoReencodedName();

    await undo();
    expect(read(CAFE)).toBe('by t2\n');
    expect(read(NEW)).toBe('made by t2\n');
    expect(existsSync(at(OLD))).toBe(false);
    expect(names()).toEqual(hex(CAFE, NEW, 'keep.txt'));
    expectNoReencodedName();
  });
});
