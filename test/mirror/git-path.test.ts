import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { quotedName, refusedComponent, refusedPath } from '../../server/git-path.js';
import { BadTreeEntryError, checkTreeEntries } from '../../server/store/tree-entry-check.js';
import { TempDirs } from '../helpers/workspace.js';
import { writeRawTree, type RawEntry } from './crafted-mirror.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
afterEach(() => temp.cleanup());

const BLOB = 'e69de29bb2d1d6434b8b29ae5bf8b2bfbbb9e3a9';

/** Every spelling git's verify_path refuses (core.protectNTFS and core.protectHFS on, as by default), and what we say of it. */
const REFUSED: [name: string | Buffer, says: RegExp][] = [
  ['.git', /is a \.git directory/],
  ['.GIT', /is a \.git directory/],
  ['.Git', /is a \.git directory/],
  ['.git.', /Windows reads as \.git/],
  ['.git ', /Windows reads as \.git/],
  ['.git. .. ', /Windows reads as \.git/],
  ['.GIT...', /Windows reads as \.git/],
  ['.git::$INDEX_ALLOCATION', /Windows reads as \.git/],
  ['.git:stream', /Windows reads as \.git/],
  ['git~1', /Windows reads as \.git/],
  ['GIT~1', /Windows reads as \.git/],
  ['Git~1. ', /Windows reads as \.git/],
  ['.git\\config', /Windows reads as \.git/],
  ['sub\\.git', /Windows reads as a path through \.git/],
  ['sub\\GIT~1\\hooks', /Windows reads as a path through \.git/],
  ['.g\u200cit', /macOS reads as \.git/],
  ['\u200d.git', /macOS reads as \.git/],
  ['.GI\u200eT', /macOS reads as \.git/],
  ['.git\u202a', /macOS reads as \.git/],
  ['.\u206fgit', /macOS reads as \.git/],
  ['\ufeff.git', /macOS reads as \.git/],
  // git stops reading a name at bytes that are not UTF-8: what came before is what it compares.
  [Buffer.from([0x2e, 0x67, 0x69, 0x74, 0xff]), /macOS reads as \.git/],
  [Buffer.from([0x2e, 0x47, 0x49, 0x54, 0xc0, 0x80]), /macOS reads as \.git/],
  ['.', /is named "\."/],
  ['..', /is named "\.\."/],
  ['', /empty name/],
  ['a/b', /"\/" in its name/],
  [Buffer.from('a\0b'), /NUL/],
];

/** Names that only look close: git writes every one of them. */
const ALLOWED = [
  '.gitignore',
  '.gitmodules',
  '.github',
  'git',
  '.git2',
  '.git-x',
  'a.git',
  '.git.x',
  '.git x',
  'git~2',
  'git~10',
  '.g\u200bit',
  '...',
  '.git\u200c.',
  Buffer.from([0x2e, 0x67, 0x69, 0xff, 0x74]),
];

describe('the path components git refuses', () => {
  it.each(REFUSED.map(([name, says]) => [JSON.stringify(name.toString()), name, says] as const))('refuses %s', (_, name, says) => {
    expect(refusedComponent(name)).toMatch(says);
  });

  it.each(ALLOWED.map((name) => [JSON.stringify(name.toString()), name] as const))('writes %s', (_, name) => {
    expect(refusedComponent(name)).toBeUndefined();
  });

  it('finds the refused component anywhere in a path, and says its name visibly', () => {
    expect(refusedPath('src/app.js')).toBeUndefined();
    expect(refusedPath('vendor/lib/.git/config')).toMatchObject({ component: '.git' });
    expect(refusedPath('a/GIT~1/hooks/pre-commit')).toMatchObject({ component: 'GIT~1' });
    expect(quotedName('.g\u200cit')).toBe('".g\\u200cit"');
    expect(quotedName('tab\there "x"')).toBe('"tab\\u0009here \\"x\\""');
  });

  it('agrees with git fsck on every .git spelling a tree entry can hold', () => {
    // One tree per name, fsck'd together: git reports each tree whose entry it takes for .git.
    const bare = temp.make('fsck-');
    execFileSync('git', ['init', '-q', '--bare', bare]);
    const candidates = [...REFUSED.map(([n]) => n), ...ALLOWED].filter((n) => {
      const b = Buffer.from(n);
      return b.length > 0 && !b.includes(0) && !b.includes(0x2f) && b.toString() !== '.' && b.toString() !== '..' && !b.includes(0x5c);
    });
    const trees = new Map(candidates.map((name) => [writeRawTree(bare, [{ mode: '100644', name, oid: BLOB }]), name]));
    execFileSync('git', ['--git-dir', bare, 'hash-object', '-w', '--stdin'], { input: '' });
    const report = (() => {
      try {
        return execFileSync('git', ['--git-dir', bare, 'fsck', '--no-dangling', '--unreachable', '--strict'], { encoding: 'utf8', stdio: 'pipe' });
      } catch (error) {
        return String((error as { stdout?: string }).stdout ?? '') + String((error as { stderr?: string }).stderr ?? '');
      }
    })();
    const gitSays = new Set([...trees].filter(([oid]) => new RegExp(`${oid}.*hasDotgit`).test(report)).map(([, name]) => Buffer.from(name).toString('latin1')));
    const weSay = new Set(candidates.filter((n) => /\.git/.test(refusedComponent(n) ?? '')).map((n) => Buffer.from(n).toString('latin1')));
    expect([...weSay].sort()).toEqual([...gitSays].sort());
    expect(weSay.size).toBeGreaterThan(15);
  });
});

describe('tree entries from outside, read as git fsck reads them', () => {
  const tree = (entries: RawEntry[]) =>
    Buffer.concat(entries.flatMap((e) => [Buffer.from(`${e.mode} `), Buffer.from(e.name), Buffer.from([0]), Buffer.from(e.oid, 'hex')]));
  const problem = (entries: RawEntry[]) => {
    try {
      checkTreeEntries(tree(entries));
      return undefined;
    } catch (error) {
      if (!(error instanceof BadTreeEntryError)) throw error;
      return error.message;
    }
  };

  it('takes a well-formed tree, with every mode git writes', () => {
    const entries = checkTreeEntries(
      tree([
        { mode: '100644', name: 'a.txt', oid: BLOB },
        { mode: '100755', name: 'b.sh', oid: BLOB },
        { mode: '120000', name: 'c', oid: BLOB },
        { mode: '40000', name: 'd', oid: BLOB },
        { mode: '160000', name: 'e', oid: BLOB },
      ]),
    );
    expect(entries.map((e) => [e.mode, e.kind])).toEqual([
      ['100644', 'blob'],
      ['100755', 'blob'],
      ['120000', 'blob'],
      ['040000', 'tree'],
      ['160000', 'commit'],
    ]);
  });

  it.each([
    ['a mode git does not use', [{ mode: '100664', name: 'a', oid: BLOB }], /"a" has the mode "100664"/],
    ['a zero-padded directory mode', [{ mode: '040000', name: 'd', oid: BLOB }], /"d" has the mode 040000 written with a leading zero/],
    ['a .git directory', [{ mode: '40000', name: '.git', oid: BLOB }], /"\.git" is a \.git directory/],
    ['an NTFS short name', [{ mode: '40000', name: 'GIT~1', oid: BLOB }], /"GIT~1" is a name Windows reads as \.git/],
    ['an HFS+ spelling', [{ mode: '40000', name: '.gi\u200ct', oid: BLOB }], /"\.gi\\u200ct" is a name macOS reads as \.git/],
    ['a dot', [{ mode: '100644', name: '.', oid: BLOB }], /"\." is named "\."/],
    ['a dot-dot', [{ mode: '40000', name: '..', oid: BLOB }], /"\.\." is named "\.\."/],
    ['a slash', [{ mode: '100644', name: 'a/b', oid: BLOB }], /"a\/b" has a "\/" in its name/],
    [
      'a duplicate',
      [
        { mode: '100644', name: 'a', oid: BLOB },
        { mode: '100644', name: 'a', oid: BLOB },
      ],
      /"a" appears twice/,
    ],
    [
      'a file and a directory of one name',
      [
        { mode: '100644', name: 'a', oid: BLOB },
        { mode: '100644', name: 'a-b', oid: BLOB },
        { mode: '40000', name: 'a', oid: BLOB },
      ],
      /"a" appears twice/,
    ],
    [
      'entries out of order',
      [
        { mode: '100644', name: 'b', oid: BLOB },
        { mode: '100644', name: 'a', oid: BLOB },
      ],
      /"a" is out of order/,
    ],
    [
      'a directory sorted as a file',
      [
        { mode: '40000', name: 'a', oid: BLOB },
        { mode: '100644', name: 'a.txt', oid: BLOB },
      ],
      /"a\.txt" is out of order/,
    ],
  ] as [string, RawEntry[], RegExp][])('refuses %s', (_, entries, says) => {
    expect(problem(entries)).toMatch(says);
  });

  it('refuses an empty name and a truncated tree', () => {
    expect(() => checkTreeEntries(Buffer.concat([Buffer.from('100644 '), Buffer.from([0]), Buffer.from(BLOB, 'hex')]))).toThrow(/empty name/);
    expect(() => checkTreeEntries(Buffer.from('100644 a\0abc'))).toThrow(/truncated/);
  });
});
