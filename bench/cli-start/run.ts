/**
 * Command start-up benchmark: how long a user (or an agent waiting on its
 * hook) waits for a `changeset-server` command, against `node -e 0` (Node
 * starting and exiting) in the same run. A real `serve` records a small
 * git workspace; each round runs, one after the other, `node -e 0` before
 * every command and then the commands: `hook claude` with UserPromptSubmit,
 * PreToolUse (an Edit), PostToolUse and Stop (a turn's events in the order
 * Claude Code sends them), `--version`, `--help` and `status`. Wall time
 * from spawn to exit, medians over the rounds, and each median's ratio to
 * the median of `node -e 0`; beside it the median and spread of each run's
 * ratio to the `node -e 0` run just before it. The hook always exits 0: its log is checked
 * for errors at the end.
 *
 *   npm run build && npm run bench -- cli-start [--rounds 21] [--files 200]
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { generateRepository, median } from '../common/workspace.js';

const argv = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : fallback;
};
const ROUNDS = Number(option('rounds', '21'));
const FILES = Number(option('files', '200'));

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const BIN = join(root, 'bin', 'changeset-server.js');
if (!existsSync(join(root, 'dist', 'server', 'cli', 'main.js'))) {
  console.error('cli-start bench: run "npm run build" first (it runs the built command)');
  process.exit(2);
}

const SESSION = 'bench-cli-start';

/** One command as a user runs it: arguments after `node`, and what goes to its stdin. */
interface Case {
  name: string;
  args: string[];
  input?: string;
}

/** Runs a command to exit; resolves with the wall time in milliseconds, rejects when it fails. */
function timed(c: Case, cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, c.args, { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stdout.resume();
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      const elapsed = performance.now() - t0;
      if (code === 0) resolve(elapsed);
      else reject(new Error(`${c.name} exited with ${code}: ${stderr}`));
    });
    child.stdin.end(c.input ?? '');
  });
}

/** Starts `serve` over the workspace; resolves once it printed its ready line. */
async function startServe(workspace: string, stateDir: string): Promise<{ stop(): Promise<void> }> {
  const child = spawn(process.execPath, [BIN, 'serve', workspace, '--json', '--no-session', '--state-dir', stateDir], {
    cwd: workspace,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', () => {
      lines.close();
      resolve();
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code} before it was ready`)));
  });
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

async function main(): Promise<void> {
  console.log(`cli-start bench: ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, node ${process.version}`);
  console.log(`${ROUNDS} rounds (after one warm-up), medians of wall time from spawn to exit; load average at start ${loadavg()[0]!.toFixed(1)}`);
  const work = realpathSync(mkdtempSync(join(tmpdir(), 'bench-cli-start-')));
  const workspace = join(work, 'repo');
  const stateDir = join(work, 'state');
  mkdirSync(workspace);
  generateRepository(workspace, FILES);
  const server = await startServe(workspace, stateDir);
  try {
    const event = (fields: Record<string, unknown>): string =>
      JSON.stringify({ session_id: SESSION, transcript_path: join(work, 't.jsonl'), cwd: workspace, ...fields });
    const hook = (name: string, fields: Record<string, unknown>): Case => ({
      name: `hook claude ${name}`,
      args: [BIN, 'hook', 'claude', '--state-dir', stateDir],
      input: event({ hook_event_name: name, ...fields }),
    });
    const edit = { tool_name: 'Edit', tool_input: { file_path: join(workspace, 'pkg0/mod0/dir0/file0.ts'), old_string: 'v', new_string: 'w' } };
    const anchor: Case = { name: 'node -e 0', args: ['-e', '0'] };
    const commands: Case[] = [
      hook('UserPromptSubmit', { prompt: 'Rename v' }),
      hook('PreToolUse', edit),
      hook('PostToolUse', { ...edit, tool_response: { success: true } }),
      hook('Stop', { stop_hook_active: false }),
      { name: '--version', args: [BIN, '--version'] },
      { name: '--help', args: [BIN, '--help'] },
      { name: 'status', args: [BIN, 'status', '--state-dir', stateDir] },
    ];
    const samples = new Map<string, number[]>([anchor, ...commands].map((c) => [c.name, []]));
    // Each command's time over the `node -e 0` run just before it: the spread of these says how far the load moved a ratio.
    const pairRatios = new Map<string, number[]>(commands.map((c) => [c.name, []]));
    for (let round = 0; round <= ROUNDS; round++) {
      for (const c of commands) {
        const a = await timed(anchor, workspace);
        const t = await timed(c, workspace);
        if (round === 0) continue;
        samples.get(anchor.name)!.push(a);
        samples.get(c.name)!.push(t);
        pairRatios.get(c.name)!.push(t / a);
      }
    }
    const logPath = join(stateDir, 'logs', 'hook.log');
    const errors = existsSync(logPath)
      ? readFileSync(logPath, 'utf8')
          .split('\n')
          .filter((line) => line.includes(': error: ') || line.includes('gave up'))
      : [];
    if (errors.length > 0) throw new Error(`the hook logged errors:\n${errors.slice(0, 5).join('\n')}`);

    const base = median(samples.get(anchor.name)!);
    console.log('\n| command | median | ratio to node -e 0 | per pair: median (spread) |');
    console.log('| --- | --- | --- | --- |');
    for (const [name, xs] of samples) {
      const pairs = pairRatios.get(name);
      const spread = pairs ? `${median(pairs).toFixed(2)}x (${Math.min(...pairs).toFixed(2)}–${Math.max(...pairs).toFixed(2)}x)` : '';
      console.log(`| ${name} | ${median(xs).toFixed(1)} ms | ${(median(xs) / base).toFixed(2)}x | ${spread} |`);
    }
    console.log(`load average at end ${loadavg()[0]!.toFixed(1)}`);
  } finally {
    await server.stop();
    rmSync(work, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  }
}

await main();
