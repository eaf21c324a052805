/**
 * Reads racing symlink swaps, many rounds: a second process flips an
 * ignored directory between itself and a symlink to a directory outside the
 * workspace, at random moments, while `harness/beforeEdit` captures files
 * in it and turn ends read them again. Nothing from outside may reach the
 * store. Prints the rounds, the requests accepted and refused, and the
 * outside files found in the store (must be 0); exits 1 if any was.
 *
 *   npm run bench -- read-races [--rounds 200] [--files 20]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ChangesetService } from '../../server/service.js';
import { workspaceLayout } from '../../server/store/index.js';
import { BenchClient } from '../common/bench-client.js';
import { git } from '../common/workspace.js';

const argv = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : fallback;
};
const ROUNDS = Number(option('rounds', '200'));
const FILES = Number(option('files', '20'));
const SECRET = 'read-races-outside-secret';

const work = realpathSync(mkdtempSync(join(tmpdir(), 'bench-read-races-')));
const stateDir = join(work, 'state');
const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir, log: () => undefined });
const { url } = await service.start();
const client = await BenchClient.connect(url, 'read-races');

const repo = join(work, 'repo');
const outside = join(work, 'outside');
mkdirSync(repo);
git(repo, ['init', '-q', '-b', 'main']);
write(repo, { '.gitignore': 'ignored*\n', 'a.txt': 'a\n' });
git(repo, ['add', '-A']);
git(repo, ['commit', '-q', '-m', 'initial']);
for (let i = 0; i < FILES; i++) write(outside, { [`f${i}.txt`]: `${SECRET} ${i}\n` });
symlinkSync(outside, join(repo, 'ignored.link'));
const session = 'ahp-session:/read-races';
await client.request('createSession', { channel: session, workingDirectory: pathToFileURL(repo).href });

let accepted = 0;
let refused = 0;
const started = Date.now();
for (let round = 0; round < ROUNDS; round++) {
  const turnId = `t${round}`;
  settle();
  for (let i = 0; i < FILES; i++) write(repo, { [`ignored/f${i}.txt`]: `inside ${round} ${i}\n` });
  await client.request('harness/turnStarted', { channel: session, turnId });
  const swapper = startSwapper();
  for (let i = 0; i < FILES; i++) {
    try {
      await client.request('harness/beforeEdit', { channel: session, turnId, paths: [`ignored/f${i}.txt`] });
      accepted++;
    } catch {
      refused++;
    }
  }
  // The turn ends with the swaps still going: its re-reads race them too.
  await client.request('harness/turnEnded', { channel: session, turnId });
  swapper.kill('SIGKILL');
  await new Promise((done) => swapper.once('exit', done));
}
const shadow = workspaceLayout(stateDir, repo).shadowDir;
const objects = execFileSync('git', ['--git-dir', shadow, 'cat-file', '--batch-all-objects', '--batch'], { maxBuffer: 1 << 30 }).toString('latin1');
const leaked = objects.split(SECRET).length - 1;
console.log(`read-races: ${ROUNDS} rounds of ${FILES} beforeEdit requests and a turn end, with a directory swapped for a link outside at random moments`);
console.log(
  `  requests accepted ${accepted}, refused ${refused}; outside files in the store: ${leaked} (must be 0); ${((Date.now() - started) / 1000).toFixed(1)} s`,
);
client.ws.close();
await service.stop();
rmSync(work, { recursive: true, force: true });
process.exit(leaked === 0 ? 0 : 1);

function write(root: string, files: Record<string, string>): void {
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), content);
  }
}

function startSwapper(): ChildProcess {
  const script = `
    const fs = require('node:fs');
    const [dir, real, link] = ['ignored', 'ignored.real', 'ignored.link'].map((n) => require('node:path').join(process.argv[1], n));
    const gap = new Int32Array(new SharedArrayBuffer(4));
    const pause = () => Atomics.wait(gap, 0, 0, Math.random() * 2);
    for (;;) {
      try { fs.renameSync(dir, real); fs.renameSync(link, dir); pause(); fs.renameSync(dir, link); fs.renameSync(real, dir); pause(); } catch {}
    }`;
  return spawn(process.execPath, ['-e', script, repo], { stdio: 'ignore' });
}

/** The real directory back at `ignored` and the link at `ignored.link`, wherever the last swapper stopped. */
function settle(): void {
  const at = (n: string) => join(repo, n);
  const isLink = (n: string) => lstatSync(at(n), { throwIfNoEntry: false })?.isSymbolicLink() === true;
  if (isLink('ignored')) renameSync(at('ignored'), at('ignored.link'));
  if (lstatSync(at('ignored.real'), { throwIfNoEntry: false })) renameSync(at('ignored.real'), at('ignored'));
  mkdirSync(at('ignored'), { recursive: true });
}
