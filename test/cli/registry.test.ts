import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { findServerFor, listServers, removeServerEntry, writeServerEntry, type ServerEntry } from '../../server/registry/index.js';
import { TempDirs } from '../helpers/workspace.js';

function entry(pid: number, directories: string[], startedAt = new Date().toISOString()): ServerEntry {
  return { pid, url: `ws://127.0.0.1:${1000 + (pid % 1000)}/`, token: 't', viewer: 'http://127.0.0.1:1/?token=t', directories, startedAt };
}

function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

describe('server registry', () => {
  const temp = new TempDirs();
  afterEach(() => temp.cleanup());

  it('writes an owner-only entry, finds it by a directory inside the workspace, and removes it', async () => {
    const state = temp.make();
    const path = await writeServerEntry(state, entry(process.pid, ['/work/a']));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect((await findServerFor(state, '/work/a'))?.pid).toBe(process.pid);
    expect((await findServerFor(state, '/work/a/src/deep'))?.pid).toBe(process.pid);
    expect(await findServerFor(state, '/work/ab')).toBeUndefined();
    expect(await findServerFor(state, '/work')).toBeUndefined();
    await removeServerEntry(state, process.pid);
    expect(existsSync(path)).toBe(false);
    expect(await listServers(state)).toEqual([]);
  });

  it('ignores and deletes entries of processes that are gone', async () => {
    const state = temp.make();
    const pid = deadPid();
    const path = await writeServerEntry(state, entry(pid, ['/work/a']));
    expect(await findServerFor(state, '/work/a')).toBeUndefined();
    expect(existsSync(path)).toBe(false);
  });

  it('prefers the server with the closest directory', async () => {
    const state = temp.make();
    await writeServerEntry(state, entry(process.pid, ['/work']));
    await writeServerEntry(state, entry(process.ppid, ['/other', '/work/a']));
    expect((await findServerFor(state, '/work/a/x'))?.pid).toBe(process.ppid);
    expect((await findServerFor(state, '/work/b'))?.pid).toBe(process.pid);
  });

  it('finds nothing in a state directory without servers', async () => {
    expect(await listServers(temp.make())).toEqual([]);
  });
});
