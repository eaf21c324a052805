/**
 * `core.autocrlf` wherever git reads it from: included files (`[include]`,
 * `[includeIf "gitdir:…"]`, `"onbranch:…"`), the system file, and the
 * environment (`GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM`,
 * `GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_COUNT`). Every case runs git with the
 * same environment on the same files; config files live in temp dirs only.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkoutConversion } from '../../server/snapshot/index.js';
import { gitTree, removeDir, tempDir } from './helpers.js';
import { SnapshotFixture, write } from './snapshot-fixture.js';

const fixture = new SnapshotFixture();
const homes: string[] = [];
afterEach(async () => {
  await fixture.cleanup();
  while (homes.length) removeDir(homes.pop()!);
});
const home = (prefix: string) => {
  const dir = tempDir(prefix);
  homes.push(dir);
  return dir;
};

const AUTOCRLF = '[core]\n\tautocrlf = true\n';

interface Case {
  name: string;
  /** Files in the temp home ('~' stands for it, 'ROOT' for the repository). */
  home?: Record<string, string>;
  /** Appended to the repository's .git/config. */
  repoConfig?: string;
  /** Files in the repository's .git directory. */
  gitDir?: Record<string, string>;
  env?: (home: string) => Record<string, string | undefined>;
  /** Whether the setting reaches git (the snapshot must agree either way). */
  applies: boolean;
  /** A checkout writes LF for LF blobs although the setting applies (`core.autocrlf=input`). */
  checkoutLf?: boolean;
}

const cases: Case[] = [
  { name: 'an [include] in ~/.gitconfig', home: { '.gitconfig': '[include]\n\tpath = more.inc\n', 'more.inc': AUTOCRLF }, applies: true },
  {
    name: 'an include chain in $XDG_CONFIG_HOME/git/config',
    home: { '.config/git/config': '[include]\n\tpath = ~/a.inc\n', 'a.inc': '[include]\n\tpath = b.inc\n', 'b.inc': AUTOCRLF },
    applies: true,
  },
  {
    name: '[includeIf "gitdir:<repository>/"]',
    home: { '.gitconfig': '[includeIf "gitdir:ROOT/"]\n\tpath = ~/crlf.inc\n', 'crlf.inc': AUTOCRLF },
    applies: true,
  },
  {
    name: '[includeIf "gitdir/i:…"] in another case, and a bare name',
    home: { '.gitconfig': '[includeIf "gitdir/i:WS/"]\n\tpath = crlf.inc\n', 'crlf.inc': AUTOCRLF },
    applies: true,
  },
  {
    name: '[includeIf "gitdir:…"] for another directory',
    home: { '.gitconfig': '[includeIf "gitdir:/elsewhere/"]\n\tpath = crlf.inc\n', 'crlf.inc': AUTOCRLF },
    applies: false,
  },
  { name: '[includeIf "onbranch:main"]', home: { '.gitconfig': '[includeIf "onbranch:main"]\n\tpath = crlf.inc\n', 'crlf.inc': AUTOCRLF }, applies: true },
  {
    name: '[includeIf "onbranch:release/"] on main',
    home: { '.gitconfig': '[includeIf "onbranch:release/"]\n\tpath = crlf.inc\n', 'crlf.inc': AUTOCRLF },
    applies: false,
  },
  {
    name: 'an [include] in the repository config, relative to it',
    repoConfig: '[include]\n\tpath = crlf.inc\n',
    gitDir: { 'crlf.inc': AUTOCRLF },
    applies: true,
  },
  {
    name: 'the system config (GIT_CONFIG_SYSTEM)',
    home: { 'system.cfg': AUTOCRLF },
    env: (h) => ({ GIT_CONFIG_SYSTEM: join(h, 'system.cfg'), GIT_CONFIG_NOSYSTEM: undefined }),
    applies: true,
  },
  {
    name: 'GIT_CONFIG_NOSYSTEM=1 skipping it',
    home: { 'system.cfg': AUTOCRLF },
    env: (h) => ({ GIT_CONFIG_SYSTEM: join(h, 'system.cfg'), GIT_CONFIG_NOSYSTEM: '1' }),
    applies: false,
  },
  {
    name: 'GIT_CONFIG_GLOBAL instead of ~/.gitconfig',
    home: { '.gitconfig': '[core]\n\tautocrlf = false\n', 'other.cfg': AUTOCRLF },
    env: (h) => ({ GIT_CONFIG_GLOBAL: join(h, 'other.cfg') }),
    applies: true,
  },
  { name: 'GIT_CONFIG_GLOBAL hiding ~/.gitconfig', home: { '.gitconfig': AUTOCRLF }, env: (h) => ({ GIT_CONFIG_GLOBAL: join(h, 'none.cfg') }), applies: false },
  {
    name: 'GIT_CONFIG_COUNT pairs over the repository config',
    repoConfig: '[core]\n\tautocrlf = false\n',
    env: () => ({ GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'Core.AutoCRLF', GIT_CONFIG_VALUE_0: 'input' }),
    applies: true,
    checkoutLf: true,
  },
];

describe('config git reads from includes, the system file and the environment', () => {
  it.each(cases)('$name', async (c) => {
    const { root, cacheDir } = fixture.workspace();
    const dir = home('snap-cfg-home-');
    const fill = (text: string) => text.replaceAll('ROOT', root).replaceAll('WS', root.toUpperCase());
    for (const [rel, text] of Object.entries(c.home ?? {})) write(dir, rel, fill(text));
    write(root, 'crlf.txt', 'one\r\ntwo\r\n');
    write(root, 'sub/lf.md', 'one\ntwo\n');
    // The tree with no setting at all, before the repository config changes.
    const plain = gitTree(root, { HOME: home('snap-cfg-empty-'), XDG_CONFIG_HOME: undefined, GIT_CONFIG_NOSYSTEM: '1' });
    for (const [rel, text] of Object.entries(c.gitDir ?? {})) write(join(root, '.git'), rel, text);
    if (c.repoConfig) appendFileSync(join(root, '.git', 'config'), fill(c.repoConfig));
    const env: Record<string, string | undefined> = {
      HOME: dir,
      XDG_CONFIG_HOME: join(dir, '.config'),
      GIT_CONFIG_NOSYSTEM: '1',
      ...(c.env?.(dir) ?? {}),
    };
    const expected = gitTree(root, env);
    expect(expected === plain).toBe(!c.applies);
    const defined = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as Record<string, string>;
    const snap = await fixture.snapshotter(root, cacheDir, undefined, { env: defined }).snapshot();
    expect(snap.tree).toBe(expected);
    // The way back agrees: CRLF written for the LF blob exactly when git would check it out so.
    const written = Buffer.from(checkoutConversion(root, 'sub/lf.md', defined).smudge(Buffer.from('one\ntwo\n'))).toString();
    expect(written).toBe(c.applies && !c.checkoutLf ? 'one\r\ntwo\r\n' : 'one\ntwo\n');
  });
});
