/**
 * Nested repositories and submodules (gitlinks in the parent, roots of their
 * own in the result), Git LFS pointers, and paths that cannot be read.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkspaceSnapshotter } from '../../server/snapshot/index.js';
import { git, gitEnv, gitTree, initRepo, removeDir, tempDir } from './helpers.js';
import { MemoryObjectStore } from './memory-store.js';
import { runChild } from './run-child.js';

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) removeDir(dirs.pop()!);
});

function write(root: string, rel: string, content: string | Buffer = rel): void {
  const p = join(root, rel);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, content);
}

function setup(): { base: string; root: string; cacheDir: string } {
  const base = tempDir();
  dirs.push(base);
  const root = join(base, 'ws');
  initRepo(root);
  write(root, 'top.txt');
  return { base, root, cacheDir: join(base, 'cache') };
}

function snapshotter(root: string, cacheDir: string): WorkspaceSnapshotter {
  return new WorkspaceSnapshotter({ root, cacheDir, store: new MemoryObjectStore(), env: { HOME: gitEnv.HOME } });
}

describe('nested repositories', () => {
  it('records a nested repository as a gitlink and snapshots it as its own root', async () => {
    const { root, cacheDir } = setup();
    const inner = join(root, 'libs/inner');
    initRepo(inner);
    write(inner, 'a.txt');
    write(inner, '.gitignore', '*.log\n');
    write(inner, 'skip.log');
    git(inner, ['add', '-A']);
    git(inner, ['commit', '-qm', 'inner']);
    write(inner, 'uncommitted.txt');
    const s = snapshotter(root, cacheDir);
    const r = await s.snapshot();
    expect(r.tree).toBe(gitTree(root));
    expect(r.nested.map((n) => n.path)).toEqual(['libs/inner']);
    expect(r.nested[0]!.tree).toBe(gitTree(inner));
    expect(r.nested[0]!.snapshot.isGitRepository).toBe(true);
    // Changes inside show up in the nested tree, not in the parent's gitlink.
    write(inner, 'a.txt', 'edited');
    const r2 = await s.snapshot();
    expect(r2.tree).toBe(r.tree);
    expect(r2.nested[0]!.tree).toBe(gitTree(inner));
    expect(r2.nested[0]!.tree).not.toBe(r.nested[0]!.tree);
    // A new commit moves the gitlink.
    git(inner, ['commit', '-qam', 'second']);
    const r3 = await s.snapshot();
    expect(r3.tree).toBe(gitTree(root));
    expect(r3.tree).not.toBe(r.tree);
  });

  it('records a submodule as git does', async () => {
    const { base, root, cacheDir } = setup();
    const upstream = join(base, 'upstream');
    initRepo(upstream);
    write(upstream, 'lib.c', 'int x;\n');
    git(upstream, ['add', '-A']);
    git(upstream, ['commit', '-qm', 'lib']);
    git(root, ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', upstream, 'deps/lib']);
    write(root, 'deps/lib/local-change.c', 'int y;\n');
    const r = await snapshotter(root, cacheDir).snapshot();
    expect(r.tree).toBe(gitTree(root));
    expect(r.nested).toHaveLength(1);
    expect(r.nested[0]!.path).toBe('deps/lib');
    expect(r.nested[0]!.tree).toBe(gitTree(join(root, 'deps/lib')));
  });

  it('omits a nested repository without a commit with a warning, as git add --ignore-errors does', async () => {
    const { root, cacheDir } = setup();
    const inner = join(root, 'fresh');
    initRepo(inner);
    write(inner, 'x.txt');
    // Not a repository: a .git file that points nowhere makes an ordinary directory.
    write(root, 'fake/.git', 'gitdir: /nonexistent\n');
    write(root, 'fake/y.txt');
    const r = await snapshotter(root, cacheDir).snapshot();
    const tmp = tempDir('snap-idx-');
    dirs.push(tmp);
    const env = { ...gitEnv, GIT_INDEX_FILE: join(tmp, 'index') };
    try {
      execFileSync('git', ['add', '-A', '--ignore-errors'], { cwd: root, env, stdio: 'ignore' });
    } catch {
      // git exits 1 after reporting the nested repository; the index is written all the same.
    }
    expect(r.tree).toBe(execFileSync('git', ['write-tree'], { cwd: root, env, encoding: 'utf8' }).trim());
    expect(r.warnings.map((w) => w.path)).toEqual(['fresh']);
    expect(r.nested.map((n) => n.path)).toEqual(['fresh']);
    expect(r.nested[0]!.snapshot.files).toBe(1);
  });
});

describe('git lfs', () => {
  it('stores pointer blobs for filter=lfs paths, exactly as git-lfs itself does', async () => {
    const { root, cacheDir } = setup();
    // git-lfs's driver as `git lfs install` configures it, here in the repository: a machine whose system config names it
    // is not needed, and without a driver git (and the snapshot) store the bytes.
    git(root, ['config', 'filter.lfs.clean', 'git-lfs clean -- %f']);
    git(root, ['config', 'filter.lfs.required', 'true']);
    write(root, '.gitattributes', '*.bin filter=lfs diff=lfs merge=lfs -text\nassets/keep.bin -filter\n');
    write(root, 'model.bin', Buffer.alloc(5000, 7));
    write(root, 'assets/big.bin', Buffer.alloc(3 * 1024 * 1024 + 17, 1));
    write(root, 'assets/keep.bin', 'stored as content');
    write(root, 'empty.bin', '');
    write(root, 'already-pointer.bin', 'version https://git-lfs.github.com/spec/v1\noid sha256:' + 'a'.repeat(64) + '\nsize 12\n');
    // Content git-lfs reads as a pointer is stored as is; anything else becomes a pointer to it. Its decoder is looser and
    // stricter than its specification in places, and these cases are where an imitation of the specification goes wrong.
    const oid = 'oid sha256:' + 'a'.repeat(64);
    const V1 = 'version https://git-lfs.github.com/spec/v1';
    const ext = (n: number, name: string) => `ext-${n}-${name} sha256:${'b'.repeat(64)}`;
    const variants: Record<string, string> = {
      'trailing-line': `${V1}\n${oid}\nsize 12\ntrailing text\n`,
      'no-final-newline': `${V1}\n${oid}\nsize 12`,
      crlf: `${V1}\r\n${oid}\r\nsize 12\r\n`,
      'blank-lines': `\n  \n${V1}\n\n${oid}\nsize 12\n\n\n`,
      hawser: `version https://hawser.github.com/spec/v1\n${oid}\nsize 12\n`,
      'git-media': `version http://git-media.io/v/2\n${oid}\nsize 12\n`,
      'other-version': `version https://example.com/git-lfs/v1\n${oid}\nsize 12\n`,
      'size-zero': `${V1}\n${oid}\nsize 0\n`,
      'size-leading-zero': `${V1}\n${oid}\nsize 012\n`,
      'size-plus': `${V1}\n${oid}\nsize +12\n`,
      'size-negative': `${V1}\n${oid}\nsize -1\n`,
      'size-too-big': `${V1}\n${oid}\nsize 99999999999999999999\n`,
      'upper-hex': `${V1}\noid sha256:${'A'.repeat(64)}\nsize 12\n`,
      'two-spaces': `${V1}\noid  sha256:${'a'.repeat(64)}\nsize 12\n`,
      'keys-unsorted': `${V1}\nsize 12\n${oid}\n`,
      'unknown-key': `${V1}\nextra x\n${oid}\nsize 12\n`,
      'ext-before-oid': `${V1}\n${ext(0, 'foo')}\n${oid}\nsize 12\n`,
      'ext-between': `${V1}\n${oid}\n${ext(0, 'foo')}\nsize 12\n`,
      'ext-after-size': `${V1}\n${oid}\nsize 12\n${ext(0, 'foo')}\n`,
      'ext-same-priority': `${V1}\n${ext(0, 'foo')}\n${ext(0, 'bar')}\n${oid}\nsize 12\n`,
      'ext-two-digits': `${V1}\n${ext(10, 'foo')}\n${oid}\nsize 12\n`,
      'repeated-version': `${V1}\n${V1}\n${oid}\nsize 12\n`,
    };
    for (const [name, content] of Object.entries(variants)) write(root, `pointers/${name}.bin`, content);
    write(root, 'pointers/1023-bytes.bin', `${V1}\n${oid}\nsize 12\n`.padEnd(1023, ' '));
    write(root, 'pointers/1024-bytes.bin', `${V1}\n${oid}\nsize 12\n`.padEnd(1024, ' '));
    const r = await snapshotter(root, cacheDir).snapshot();
    const tmp = tempDir('snap-idx-');
    dirs.push(tmp);
    const env = { GIT_INDEX_FILE: join(tmp, 'index') };
    // The reference is git-lfs's own clean filter, configured above.
    git(root, ['add', '-A'], env);
    expect(r.tree).toBe(git(root, ['write-tree'], env));
  });
});

describe('unreadable paths', () => {
  it('skips files and directories it cannot read, with warnings (as an unprivileged user)', () => {
    const { base, root, cacheDir } = setup();
    write(root, 'secret.txt', 'no');
    write(root, 'locked/inner.txt', 'no');
    write(root, 'ok/fine.txt', 'yes');
    chmodSync(join(root, 'secret.txt'), 0o000);
    chmodSync(join(root, 'locked'), 0o000);
    let opts = {};
    // chmod 000 does not stop root: run the snapshot as "nobody" so the permission check is real.
    if (process.getuid?.() === 0) {
      chmodSync(base, 0o755);
      mkdirSync(cacheDir);
      chownSync(cacheDir, 65534, 65534);
      opts = { uid: 65534, gid: 65534 };
    }
    const [r] = runChild({ root, cacheDir, home: base }, opts);
    expect(r!.warnings.map((w) => w.path).sort()).toEqual(['locked', 'secret.txt']);
    chmodSync(join(root, 'locked'), 0o755);
    rmSync(join(root, 'secret.txt'));
    rmSync(join(root, 'locked'), { recursive: true });
    expect(r!.tree).toBe(gitTree(root));
  });
});
