/**
 * The way back: `workingTreeContent` gives the bytes `git checkout` writes
 * for a stored blob, with git itself as the oracle.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { workingTreeContent } from '../../server/snapshot/index.js';
import { git, gitEnv, initRepo, removeDir, tempDir } from './helpers.js';

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) removeDir(dirs.pop()!);
});

const FILES: Record<string, string | Buffer> = {
  'lf.txt': 'one\ntwo\n',
  'mixed.txt': 'one\r\ntwo\n',
  'lone-cr.txt': 'one\rtwo\n',
  'nul.txt': Buffer.from('one\n\0two\n'),
  'no-newline.txt': 'one',
  'script.cmd': 'echo one\necho two\n',
  'data.bin': 'one\ntwo\n',
  'sub/deep.md': 'a\nb\n',
  'sub/keep.md': 'a\nb\n',
};

describe('workingTreeContent', () => {
  it.each([
    { name: 'text=auto with core.autocrlf=true', config: [['core.autocrlf', 'true']], attributes: '* text=auto\n' },
    { name: 'core.autocrlf=true alone', config: [['core.autocrlf', 'true']], attributes: '' },
    { name: 'core.autocrlf=input', config: [['core.autocrlf', 'input']], attributes: '* text=auto\n' },
    { name: 'text with core.eol=crlf', config: [['core.eol', 'crlf']], attributes: '* text\n*.bin -text\n' },
    {
      name: 'eol=crlf, binary, macros and a nested file',
      config: [],
      attributes: '[attr]dos text eol=crlf\n*.txt eol=crlf\n*.cmd dos\n*.bin binary\n*.md text=auto eol=crlf\n',
    },
    { name: 'no attributes, no config', config: [], attributes: '' },
  ])('writes what git checkout writes: $name', ({ config, attributes }) => {
    const base = tempDir();
    dirs.push(base);
    const root = join(base, 'ws');
    initRepo(root);
    for (const [k, v] of config) git(root, ['config', k!, v!]);
    if (attributes) writeFileSync(join(root, '.gitattributes'), attributes);
    mkdirSync(join(root, 'sub'));
    writeFileSync(join(root, 'sub/.gitattributes'), 'keep.md -text\n');
    for (const [rel, content] of Object.entries(FILES)) writeFileSync(join(root, rel), content);
    git(root, ['add', '-A']);
    git(root, ['commit', '-q', '-m', 'files']);
    for (const rel of Object.keys(FILES)) rmSync(join(root, rel));
    git(root, ['checkout', '--', '.']);
    const env = { HOME: gitEnv.HOME, XDG_CONFIG_HOME: gitEnv.XDG_CONFIG_HOME };
    for (const rel of Object.keys(FILES)) {
      const blob = execFileSync('git', ['cat-file', 'blob', `HEAD:${rel}`], { cwd: root, env: gitEnv });
      expect(Buffer.from(workingTreeContent(root, rel, blob, env)), rel).toEqual(readFileSync(join(root, rel)));
    }
    // A working directory below the top finds the same attributes.
    const blob = execFileSync('git', ['cat-file', 'blob', 'HEAD:sub/deep.md'], { cwd: root, env: gitEnv });
    expect(Buffer.from(workingTreeContent(join(root, 'sub'), 'deep.md', blob, env))).toEqual(readFileSync(join(root, 'sub/deep.md')));
  });
});
