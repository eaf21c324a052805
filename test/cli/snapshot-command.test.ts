import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { run as inProcess } from '../helpers/cli-in-process.js';
import { git, makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';

// The refusal runs the built binary (`npm test` builds first; run `npm run build` before running this file alone); the snapshots run
// in the test's process (test/helpers/cli-in-process.ts).
const BIN = 'bin/changeset-server.js';
const run = promisify(execFile);
const temp = new TempDirs();
afterEach(() => temp.cleanup());

describe('changeset-server snapshot', () => {
  it('prints the tree id git would write, without a git executable on PATH, and reuses its cache', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n', 'src/b.ts': 'export {};\n', '.gitignore': '*.log\n' });
    writeFiles(repo, { 'debug.log': 'ignored\n', 'new.txt': 'untracked\n' });
    const stateDir = temp.make('state-');
    const env = { PATH: temp.make('empty-path-') };
    const first = JSON.parse((await inProcess(['snapshot', repo, '--state-dir', stateDir, '--json'], { env })).stdout) as {
      tree: string;
      files: number;
      ms: number;
      hashed: number;
    };
    const index = join(temp.make('index-'), 'index');
    git(repo, ['add', '-A'], undefined, { GIT_INDEX_FILE: index });
    expect(first.tree).toBe(git(repo, ['write-tree'], undefined, { GIT_INDEX_FILE: index }));
    expect(first.files).toBe(4);
    expect(first.ms).toBeGreaterThanOrEqual(0);
    const second = JSON.parse((await inProcess(['snapshot', repo, '--state-dir', stateDir, '--json'], { env })).stdout) as {
      tree: string;
      hashed: number;
    };
    expect(second).toMatchObject({ tree: first.tree, hashed: 0 });
  });

  it('refuses a missing directory with exit code 2', async () => {
    await expect(run(process.execPath, [BIN, 'snapshot', join(temp.make(), 'nope')])).rejects.toMatchObject({ code: 2 });
  });
});
