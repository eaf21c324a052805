import { mkdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeServerEntry } from '../../server/registry/index.js';
import { run as inProcess } from '../helpers/cli-in-process.js';
import { TempDirs } from '../helpers/workspace.js';
import { run as spawned } from './serve-process.js';

/**
 * The CLI tests run most commands in their own process (test/helpers/cli-in-process.ts); these check that a
 * command answers there as the binary does, and that the call leaves the test's process as it found it.
 */
describe('a command run in the test process', () => {
  const temp = new TempDirs();
  afterAll(() => temp.cleanup());

  it('answers as the binary does: the words, streams and exit codes of an unknown command, a usage mistake and a failure in JSON', async () => {
    const cwd = temp.make();
    const cases = [['revrt'], ['status', '--bogus'], ['status', '--json', '--state-dir', temp.make()]];
    // The binary's runs side by side; the calls in the process run one at a time.
    const binary = await Promise.all(cases.map((args) => spawned(args, { cwd })));
    for (const [i, args] of cases.entries()) expect(await inProcess(args, { cwd }), args.join(' ')).toEqual(binary[i]);
  });

  it('runs in the directory and environment asked for, reads its input, and puts back the process as it was', async () => {
    const before = { cwd: process.cwd(), env: { ...process.env }, exitCode: process.exitCode };
    const home = realpathSync(temp.make());
    const workspace = join(home, 'ws');
    mkdirSync(join(workspace, 'sub'), { recursive: true });
    // The default state directory comes from the environment given: a server registered there for the folder is the one tried.
    await writeServerEntry(join(home, 'xdg', 'changeset-server'), {
      pid: process.pid,
      url: 'ws://127.0.0.1:9/',
      token: 't',
      viewer: 'http://127.0.0.1:9/?token=t',
      directories: [workspace],
      startedAt: new Date().toISOString(),
    });
    const env = { XDG_STATE_HOME: join(home, 'xdg'), NO_SUCH_VARIABLE_X: 'x' };
    const found = await inProcess(['status'], { cwd: join(workspace, 'sub'), env });
    expect(found.code).toBe(1);
    expect(found.stderr).toContain('127.0.0.1:9');
    // The state directory relative to the directory the command runs in.
    const none = await inProcess(['sessions', '--state-dir', 'state'], { cwd: join(workspace, 'sub'), env });
    expect(none).toEqual({ code: 0, stdout: 'no sessions\n', stderr: `Nothing was recorded in ${join(workspace, 'sub')}, and no server records it.\n` });
    // The hook reads its event from the input given (not JSON here: it logs why, answers nothing and exits 0).
    const hook = await inProcess(['hook', 'claude', '--state-dir', join(home, 'hook-state')], { cwd: workspace, input: 'not json\n' });
    expect(hook).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(readFileSync(join(home, 'hook-state', 'logs', 'hook.log'), 'utf8')).toContain(
      "claude: error: hook input is not JSON: Unexpected token 'o', \"not json",
    );
    expect({ cwd: process.cwd(), env: { ...process.env }, exitCode: process.exitCode }).toEqual(before);
  });

  it('refuses the commands that run until stopped', async () => {
    await expect(inProcess(['serve', temp.make()])).rejects.toThrow('runs until stopped');
    await expect(inProcess(['mcp'])).rejects.toThrow('runs until stopped');
  });
});
