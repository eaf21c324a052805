/**
 * Ignore rules follow git: every `.gitignore` level, negations, anchoring,
 * directory-only patterns, `**`, escapes, info/exclude and the global
 * excludes file. Git decides what the right tree is.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkspaceSnapshotter } from '../../server/snapshot/index.js';
import { compileGlob } from '../../server/snapshot/wildmatch.js';
import { parseIgnoreLine } from '../../server/snapshot/ignore-rules.js';
import { git, gitTree, gitTreeOutsideRepo, initRepo, removeDir, tempDir } from './helpers.js';
import { MemoryObjectStore } from './memory-store.js';

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) removeDir(dirs.pop()!);
});

function write(root: string, rel: string, content = rel): void {
  const p = join(root, rel);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, content);
}

function base(): string {
  const b = tempDir();
  dirs.push(b);
  return b;
}

function snap(
  root: string,
  cacheDir: string,
  home: string,
  extra: Partial<ConstructorParameters<typeof WorkspaceSnapshotter>[0]> = {},
): Promise<{ tree: string; files: number }> {
  return new WorkspaceSnapshotter({
    root,
    cacheDir,
    store: new MemoryObjectStore(),
    env: { HOME: home, XDG_CONFIG_HOME: join(home, '.config') },
    ...extra,
  }).snapshot();
}

const FILES = [
  'keep.txt',
  'debug.log',
  'logs/a.log',
  'logs/important.log',
  'logs/deep/b.log',
  'build/out.js',
  'src/build/generated.ts',
  'src/app.ts',
  'src/app.test.ts',
  'doc/frotz/a.txt',
  'a/doc/frotz/b.txt',
  'foo/bar/baz.txt',
  'foo/x/y/bar/z.txt',
  'top-only.txt',
  'sub/top-only.txt',
  '#literal',
  '!bang',
  'trailing ',
  'node_modules/pkg/index.js',
  'vendor/lib/keep.me',
  'vendor/lib/drop.me',
  'excluded-dir/inner/re-included.txt',
  'data/file.csv',
  'data/keep/file.csv',
  'a.tmp',
  'nested/level/x.tmp',
  'nested/level/y.tmp',
  'nested/level/keep.tmp',
  'abc/def/ghi.md',
  'abc/ghi.md',
  'q1.txt',
  'qq.txt',
  'ch[1].txt',
  'x/info-excluded.txt',
  'global-excluded.bak',
  'dir-only/file',
  'dir-only-file',
  'spaces in name.txt',
  'zz/.hidden',
  'zz/file',
];

const ROOT_IGNORE = [
  '# a comment',
  '*.log',
  '!important.log',
  '/build/',
  'doc/frotz/',
  'foo/**/bar',
  '/top-only.txt',
  '\\#literal',
  '\\!bang',
  'trailing\\ ',
  'node_modules/',
  'excluded-dir/',
  '!excluded-dir/inner/re-included.txt',
  'data/**/*.csv',
  '!data/keep/',
  '*.tmp',
  'abc/**/ghi.md',
  'q?.txt',
  'ch\\[1\\].txt',
  'dir-only/',
  'dir-only-file/',
  'spaces in name.txt   ',
  '.hidden',
  '',
].join('\n');

function populate(root: string): void {
  for (const f of FILES) write(root, f);
  write(root, '.gitignore', ROOT_IGNORE);
  write(root, 'logs/.gitignore', '!deep/\n!*.log\ndeep/b.log\n');
  write(root, 'vendor/.gitignore', '*\n!lib/\nlib/*\n!lib/keep.me\n!.gitignore\n');
  write(root, 'nested/level/.gitignore', '!keep.tmp\n');
  write(root, 'data/.gitignore', '!*.csv\n');
}

describe('ignore rules', () => {
  it('matches git for .gitignore at several levels, info/exclude and the global excludes file', async () => {
    const b = base();
    const home = join(b, 'home');
    const root = join(b, 'ws');
    initRepo(root);
    populate(root);
    write(root, '.git/info/exclude', 'x/info-excluded.txt\n');
    write(home, '.config/git/ignore', '*.bak\n');
    const s = await snap(root, join(b, 'cache'), home);
    expect(s.tree).toBe(gitTree(root, { HOME: home, XDG_CONFIG_HOME: join(home, '.config') }));
    // Sanity: the rules did exclude things.
    expect(s.files).toBeLessThan(FILES.length);
  });

  it('uses core.excludesFile from ~/.gitconfig instead of the XDG default', async () => {
    const b = base();
    const home = join(b, 'home');
    const root = join(b, 'ws');
    initRepo(root);
    write(root, 'a.bak', 'a');
    write(root, 'b.old', 'b');
    write(home, '.config/git/ignore', '*.bak\n');
    write(home, 'my-excludes', '*.old\n');
    write(home, '.gitconfig', '[core]\n\texcludesFile = ~/my-excludes\n');
    const s = await snap(root, join(b, 'cache'), home);
    expect(s.tree).toBe(gitTree(root, { HOME: home, XDG_CONFIG_HOME: join(home, '.config') }));
    expect(s.files).toBe(1);
  });

  it('honours .gitignore and the built-in excludes outside repositories', async () => {
    const b = base();
    const home = join(b, 'home');
    mkdirSync(home);
    const root = join(b, 'plain');
    populate(root);
    write(root, 'dist/bundle.js');
    write(root, '.env', 'SECRET=1');
    write(root, '.env.local', 'SECRET=2');
    write(root, 'backup.tar.gz', 'zz');
    write(root, 'pkg/__pycache__/m.pyc');
    write(root, 'target/debug/app');
    const s = await snap(root, join(b, 'cache'), home);
    const { BUILTIN_EXCLUDES } = await import('../../server/snapshot/index.js');
    write(b, 'builtin-excludes', BUILTIN_EXCLUDES.join('\n') + '\n');
    expect(s.tree).toBe(gitTreeOutsideRepo(root, join(b, 'builtin-excludes')));
    const none = await snap(root, join(b, 'cache2'), home, { builtinExcludes: false });
    expect(none.tree).toBe(gitTreeOutsideRepo(root));
    expect(none.files).toBeGreaterThan(s.files);
  });

  it('lets a workspace .gitignore re-include a built-in exclude, and extraExcludes win over everything', async () => {
    const b = base();
    const root = join(b, 'plain');
    write(root, 'dist/keep.js');
    write(root, 'src/a.ts');
    write(root, 'src/secret.key');
    write(root, '.gitignore', '!dist/\n!*.key\n');
    const s = await snap(root, join(b, 'cache'), b, { extraExcludes: ['*.key'] });
    expect(s.files).toBe(3); // .gitignore, dist/keep.js, src/a.ts
  });

  it('re-evaluates decisions when a .gitignore changes', async () => {
    const b = base();
    const root = join(b, 'ws');
    initRepo(root);
    write(root, 'a.txt');
    write(root, 'sub/b.txt');
    write(root, 'sub/c.md');
    const s = new WorkspaceSnapshotter({ root, cacheDir: join(b, 'cache'), store: new MemoryObjectStore(), env: { HOME: b } });
    expect((await s.snapshot()).tree).toBe(gitTree(root, { HOME: b }));
    write(root, 'sub/.gitignore', '*.md\n');
    expect((await s.snapshot()).tree).toBe(gitTree(root, { HOME: b }));
    write(root, '.gitignore', 'sub/\n');
    expect((await s.snapshot()).tree).toBe(gitTree(root, { HOME: b }));
    write(root, '.git/info/exclude', 'a.txt\n');
    write(root, '.gitignore', '');
    const last = await s.snapshot();
    expect(last.tree).toBe(gitTree(root, { HOME: b }));
    expect(last.files).toBe(3); // .gitignore, sub/.gitignore, sub/b.txt
  });

  it("snapshots a subdirectory of a repository with the ancestors' rules", async () => {
    const b = base();
    const root = join(b, 'ws');
    initRepo(root);
    write(root, '.gitignore', '*.log\nsub/dir/skip/\n');
    write(root, 'sub/.gitignore', '/dir/*.tmp\n');
    write(root, 'sub/dir/a.txt');
    write(root, 'sub/dir/a.log');
    write(root, 'sub/dir/a.tmp');
    write(root, 'sub/dir/skip/x.txt');
    write(root, 'sub/dir/in/b.txt');
    git(root, ['add', '-A']);
    const s = await snap(join(root, 'sub/dir'), join(b, 'cache'), b);
    const expected = git(root, ['write-tree', '--prefix=sub/dir/']);
    expect(s.tree).toBe(expected);
    expect(s.files).toBe(2);
  });
});

describe('wildmatch', () => {
  const cases: [string, string, boolean, boolean][] = [
    // glob, text, pathname, expected
    ['*.js', 'a.js', false, true],
    ['*.js', 'a.ts', false, false],
    ['a/*/c', 'a/b/c', true, true],
    ['a/*/c', 'a/b/x/c', true, false],
    ['a/**/c', 'a/c', true, true],
    ['a/**/c', 'a/b/x/c', true, true],
    ['**/c', 'c', true, true],
    ['**/c', 'x/y/c', true, true],
    ['a/**', 'a/b/c', true, true],
    ['a/**', 'a', true, false],
    ['a**b', 'a/b', true, false],
    ['a?c', 'a/c', true, false],
    ['[a-c]x', 'bx', false, true],
    ['[!a-c]x', 'bx', false, false],
    ['[^a-c]x', 'dx', false, true],
    ['[[:digit:]]*', '7up', false, true],
    ['[]]', ']', false, true],
    ['\\*', '*', false, true],
    ['\\*', 'x', false, false],
    ['abc\\', 'abc\\', false, false],
    ['[abc', 'a', false, false],
  ];
  it.each(cases)('%s vs %s (pathname %s) is %s', (glob, text, pathname, expected) => {
    expect(compileGlob(glob, pathname)(text)).toBe(expected);
  });

  it('parses escapes, negation, directory-only and trailing spaces like git', () => {
    expect(parseIgnoreLine('# comment')).toBeUndefined();
    expect(parseIgnoreLine('   ')).toBeUndefined();
    expect(parseIgnoreLine('\\#x')!.test('#x')).toBe(true);
    expect(parseIgnoreLine('!x')!.negate).toBe(true);
    expect(parseIgnoreLine('\\!x')!.negate).toBe(false);
    expect(parseIgnoreLine('d/')!.dirOnly).toBe(true);
    expect(parseIgnoreLine('d/')!.basename).toBe(true);
    expect(parseIgnoreLine('/d')!.basename).toBe(false);
    expect(parseIgnoreLine('a b  ')!.test('a b')).toBe(true);
    expect(parseIgnoreLine('a\\ ')!.test('a ')).toBe(true);
  });
});
