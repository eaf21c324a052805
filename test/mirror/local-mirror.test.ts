import { execFileSync } from 'node:child_process';
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { importMirror, ImportError } from '../../server/mirror/import.js';
import { mirrorRemote, MirrorSettingsError } from '../../server/mirror/mirror-remote.js';
import { WorkspaceMirror } from '../../server/mirror/workspace-mirror.js';
import { openWorkspaceStore } from '../../server/store/index.js';
import { makeRepo, TempDirs } from '../helpers/workspace.js';
import { mirrorSession, rewriteMirror, treeWith, writeBlob } from './crafted-mirror.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
afterEach(() => temp.cleanup());

const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
const gitBare = (bare: string, args: string[]): string =>
  execFileSync('git', ['--git-dir', bare, ...args], { encoding: 'utf8', env: GIT_ENV, stdio: ['ignore', 'pipe', 'ignore'] }).trim();

function bareRepo(): string {
  const bare = join(temp.make('drive-'), 'mirror.git');
  execFileSync('git', ['init', '-q', '--bare', bare], { env: GIT_ENV });
  return bare;
}

/** One session of one turn recorded on "machine A" and mirrored to `target` (a path or file:// URL). */
async function mirrored(target: string): Promise<{ sessionId: string; machineA: string }> {
  const machineA = makeRepo(temp.make('machine-a-'), { 'a.txt': 'one\n' });
  const { sessionId } = await mirrorSession(
    target,
    {},
    {
      stateDir: temp.make('state-a-'),
      workspaceDir: machineA,
      sessionId: 'drive-session',
      before: { 'a.txt': 'one\n', 'src/app.js': 'console.log(1);\n' },
      after: { 'a.txt': 'two\n', 'src/app.js': 'console.log(2);\n' },
    },
  );
  return { sessionId, machineA };
}

async function importedTurns(stateDir: string, workspaceDir: string, sessionId: string): Promise<string[]> {
  const store = await openWorkspaceStore({ stateDir, workspaceDir });
  try {
    return (await store.listSessionCheckpoints(sessionId)).map((c) => c.kind);
  } finally {
    await store.close();
  }
}

describe('a mirror in a bare repository on a local path', () => {
  it('is pushed to: git lists the mirror refs, git fsck finds nothing wrong, and a second push adds to it', async () => {
    const bare = bareRepo();
    const { machineA } = await mirrored(bare);
    const refs = gitBare(bare, ['for-each-ref', '--format=%(refname)']).split('\n');
    expect(refs.some((r) => /^refs\/changeset-server\/mirror\/.+\/manifest$/.test(r))).toBe(true);
    expect(refs.some((r) => /^refs\/changeset-server\/mirror\/.+\/sessions\/drive-session\/head$/.test(r))).toBe(true);
    expect(refs.every((r) => r.startsWith('refs/changeset-server/mirror/'))).toBe(true);
    gitBare(bare, ['fsck', '--strict', '--no-dangling']);

    // Another session later: the remote already holds the first, the push adds the second.
    const store = await openWorkspaceStore({ stateDir: temp.make('state-b-'), workspaceDir: machineA });
    try {
      await store.writeCheckpoint({ sessionId: 'second', kind: 'start', turnId: 't1', tree: '4b825dc642cb6eb9a060e54bf8d69288fbee4904' });
      const mirror = new WorkspaceMirror(store, mirrorRemote(pathToFileURL(bare).href));
      await mirror.syncNow();
      expect((await mirror.status()).lastError).toBeUndefined();
    } finally {
      await store.close();
    }
    expect(gitBare(bare, ['for-each-ref', '--format=%(refname)'])).toMatch(/sessions\/second\/head/);
    gitBare(bare, ['fsck', '--strict', '--no-dangling']);
  });

  it('is imported from by path and by file:// URL, giving back the session', async () => {
    const bare = bareRepo();
    const { sessionId } = await mirrored(bare);
    for (const url of [bare, pathToFileURL(bare).href]) {
      const checkout = makeRepo(temp.make('checkout-'), { 'a.txt': 'one\n' });
      const stateDir = temp.make('state-c-');
      const result = await importMirror({ url, stateDir, workspaceDir: checkout });
      expect(result.imported, url).toEqual([{ sessionId, turns: 1 }]);
      expect(await importedTurns(stateDir, checkout, sessionId), url).toEqual(['safety', 'start', 'end']);
    }
  });

  it('takes a relative path from the directory it is given in, and refuses file:// URLs naming another host and other schemes', () => {
    expect(mirrorRemote('./drive/mirror.git', {}, '/home/me/project').url).toBe('/home/me/project/drive/mirror.git');
    expect(mirrorRemote('file:///mnt/share/mirror.git/', {}).url).toBe('/mnt/share/mirror.git');
    expect(() => mirrorRemote('file://fileserver/share/mirror.git', {})).toThrow(MirrorSettingsError);
    expect(() => mirrorRemote('file://fileserver/share/mirror.git', {})).toThrow(/on this machine/);
    expect(() => mirrorRemote('ssh://host/repo.git', {})).toThrow(/http:\/\/ or https:\/\/.*file:\/\/ or a path/);
  });

  it('is refused with a clear error when the path is a working tree, a plain directory or missing', async () => {
    const checkout = makeRepo(temp.make('checkout-'), { 'a.txt': 'one\n' });
    const working = makeRepo(temp.make('working-'), { 'x.txt': 'x\n' });
    const plain = temp.make('plain-');
    await expect(importMirror({ url: working, stateDir: temp.make('state-'), workspaceDir: checkout })).rejects.toThrow(
      /is a working tree, not a bare repository/,
    );
    await expect(importMirror({ url: plain, stateDir: temp.make('state-'), workspaceDir: checkout })).rejects.toThrow(/is not a bare git repository/);
    await expect(importMirror({ url: join(plain, 'nope.git'), stateDir: temp.make('state-'), workspaceDir: checkout })).rejects.toThrow(
      /does not exist: make the mirror with git init --bare/,
    );
    // Pushing to a working tree fails the same way, and says so in the mirror's status.
    const store = await openWorkspaceStore({ stateDir: temp.make('state-p-'), workspaceDir: checkout });
    try {
      await store.writeCheckpoint({ sessionId: 's', kind: 'start', turnId: 't1', tree: '4b825dc642cb6eb9a060e54bf8d69288fbee4904' });
      const mirror = new WorkspaceMirror(store, mirrorRemote(working), { retryBaseMs: 60_000 });
      await mirror.syncNow();
      expect((await mirror.status()).lastError).toMatch(/is a working tree, not a bare repository/);
      await mirror.stop(0);
    } finally {
      await store.close();
    }
    expect(execFileSync('git', ['-C', working, 'for-each-ref'], { encoding: 'utf8' })).not.toMatch(/changeset-server/);
  });
});

describe('a hostile mirror on a local path', () => {
  it('is refused for a checkpoint tree holding .git, an object past the size limit, and a symbolic link out of the repository', async () => {
    const bare = bareRepo();
    await mirrored(bare);
    const checkout = makeRepo(temp.make('checkout-'), { 'a.txt': 'one\n' });
    const noneImported = async (url: string, says: RegExp, limits?: { maxObjectBytes: number; maxTotalBytes: number }) => {
      const stateDir = temp.make('state-');
      const attempt = importMirror({ url, stateDir, workspaceDir: checkout, ...(limits ? { limits } : {}) });
      await expect(attempt).rejects.toThrow(ImportError);
      await expect(attempt).rejects.toThrow(says);
    };

    // A turn that would write the checkout's .git/config, added with real git.
    const dotGit = join(temp.make('hostile-'), 'dot-git.git');
    execFileSync('cp', ['-R', bare, dotGit]);
    const config = writeBlob(dotGit, '[core]\n\tfsmonitor = touch pwned\n');
    rewriteMirror(dotGit, {
      tree: (tree, trailer) => (trailer['kind'] === 'end' ? undefined : treeWith(dotGit, tree, [{ mode: '40000', name: '.git', oid: treeOf(dotGit, config) }])),
    });
    await noneImported(dotGit, /refused, nothing was imported: .*\.git/);

    // A loose object larger than the limit: refused while it inflates.
    const big = join(temp.make('hostile-'), 'big.git');
    execFileSync('cp', ['-R', bare, big]);
    writeBlob(big, Buffer.alloc(64 * 1024, 0));
    await noneImported(big, /larger than 16\.0 KiB/, { maxObjectBytes: 16 * 1024, maxTotalBytes: 1024 ** 3 });

    // The objects directory a symbolic link to another repository: never followed.
    const linked = join(temp.make('hostile-'), 'linked.git');
    execFileSync('cp', ['-R', bare, linked]);
    renameSync(join(linked, 'objects'), join(linked, 'objects-elsewhere'));
    symlinkSync(join(linked, 'objects-elsewhere'), join(linked, 'objects'));
    await expect(importMirror({ url: linked, stateDir: temp.make('state-'), workspaceDir: checkout })).rejects.toThrow(/symbolic link/);

    // A ref that is a symbolic link to a file outside.
    const refLink = join(temp.make('hostile-'), 'ref-link.git');
    execFileSync('cp', ['-R', bare, refLink]);
    const outside = join(temp.make('outside-'), 'secret');
    writeFileSync(outside, `${'1'.repeat(40)}\n`);
    mkdirSync(join(refLink, 'refs/changeset-server/mirror/x'), { recursive: true });
    symlinkSync(outside, join(refLink, 'refs/changeset-server/mirror/x/manifest'));
    await expect(importMirror({ url: refLink, stateDir: temp.make('state-'), workspaceDir: checkout })).rejects.toThrow(/symbolic link/);
  });
});

/** A tree holding one file, `config`. */
function treeOf(bare: string, blob: string): string {
  return execFileSync('git', ['--git-dir', bare, 'mktree'], { input: `100644 blob ${blob}\tconfig\n`, encoding: 'utf8', env: GIT_ENV }).trim();
}
