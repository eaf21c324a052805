/**
 * Mirror pushes: the first push of a session over a workspace whose blobs
 * live in the workspace repository only, then the push after a turn that
 * changed a few files — ours (isomorphic-git reading through the store) and
 * native `git push` of the same commits from the shadow repository (which
 * reaches the workspace's objects through objects/info/alternates), to the
 * same kind of smart-HTTP remote (git http-backend), alternated per round.
 *
 *   npm run bench -- mirror [files=5000] [rounds=3]
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mirrorRemote } from '../../server/mirror/mirror-remote.js';
import { WorkspaceMirror } from '../../server/mirror/workspace-mirror.js';
import { openWorkspaceStore } from '../../server/store/index.js';
import { serializeTree } from '../../server/store/tree.js';
import { GitHttpServer } from '../../test/helpers/git-http-server.js';
import { gitEnv } from '../common/workspace.js';

const files = Number(process.argv[2] ?? 5000);
const rounds = Number(process.argv[3] ?? 3);
const root = mkdtempSync(join(tmpdir(), 'bench-mirror-'));
// The remote runs in this process: a push must not block its event loop.
const gitAsync = (args: string[]) => promisify(execFile)('git', args, { env: gitEnv });
const sh = (cwd: string, args: string[]) => execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();

const work = join(root, 'work');
mkdirSync(work);
sh(work, ['init', '-q', '-b', 'main']);
for (let i = 0; i < files; i++) {
  mkdirSync(join(work, `d${i % 100}`), { recursive: true });
  writeFileSync(join(work, `d${i % 100}`, `f${i}.txt`), `file ${i}\n${'content line\n'.repeat(20 + (i % 50))}${Math.random()}\n`);
}
sh(work, ['add', '-A']);
sh(work, ['commit', '-q', '-m', 'files']);
const remotes = join(root, 'remotes');
mkdirSync(remotes);
const server = await GitHttpServer.start({ root: remotes });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ours = { first: [] as number[], turn: [] as number[] };
const native = { first: [] as number[], turn: [] as number[] };

/** A fresh store with a session that started on the committed tree; `endTurn` records a turn that changed ten files. */
async function prepare(stateDir: string, round: number) {
  const store = await openWorkspaceStore({ stateDir, workspaceDir: work });
  const tree = sh(work, ['rev-parse', 'HEAD^{tree}']);
  const start = await store.writeCheckpoint({ sessionId: 's', kind: 'start', turnId: 't1', tree });
  const endTurn = async () => {
    const top = await store.readTree(tree);
    const entries = [];
    for (const [i, entry] of top.entries()) {
      if (i >= 10) {
        entries.push({ mode: entry.mode, name: entry.name, oid: entry.oid });
        continue;
      }
      const sub = await store.readTree(entry.oid);
      const blob = await store.writeObject('blob', Buffer.from(`changed ${round} ${entry.name}\n`));
      const newSub = await store.writeObject('tree', serializeTree(sub.map((e, k) => ({ mode: e.mode, name: e.name, oid: k === 0 ? blob : e.oid }))));
      entries.push({ mode: entry.mode, name: entry.name, oid: newSub });
    }
    return store.writeCheckpoint({ sessionId: 's', kind: 'end', turnId: 't1', tree: await store.writeObject('tree', serializeTree(entries)) });
  };
  return { store, start: start.commit, endTurn };
}

for (let round = 0; round < rounds; round++) {
  for (const who of round % 2 === 0 ? ['ours', 'native'] : ['native', 'ours']) {
    const { store, start, endTurn } = await prepare(join(root, `state-${who}-${round}`), round);
    const shadow = store.layout.shadowDir;
    const repo = `${who}-${round}.git`;
    execFileSync('git', ['init', '-q', '--bare', join(remotes, repo)]);
    const url = server.url(repo);
    if (who === 'ours') {
      const mirror = new WorkspaceMirror(store, mirrorRemote(url, {}));
      let t = performance.now();
      await mirror.syncNow();
      ours.first.push(performance.now() - t);
      await endTurn();
      t = performance.now();
      await mirror.syncNow();
      ours.turn.push(performance.now() - t);
      const status = await mirror.status();
      if (status.lastError) throw new Error(status.lastError);
    } else {
      let t = performance.now();
      await gitAsync(['--git-dir', shadow, 'push', '-q', url, `${start}:refs/changeset-server/mirror/x/sessions/s/head`]);
      native.first.push(performance.now() - t);
      const end = await endTurn();
      t = performance.now();
      await gitAsync(['--git-dir', shadow, 'push', '-q', url, `${end.commit}:refs/changeset-server/mirror/x/sessions/s/head`]);
      native.turn.push(performance.now() - t);
    }
    await store.close();
  }
}
await server.stop();
rmSync(root, { recursive: true, force: true });

const line = (what: string, a: number[], b: number[]) =>
  console.log(
    `${what.padEnd(44)} ours ${median(a).toFixed(0).padStart(6)} ms   git push ${median(b).toFixed(0).padStart(6)} ms   ratio ${(median(a) / median(b)).toFixed(2)}`,
  );
console.log(`mirror push, ${files} files (blobs in the workspace repository only), median of ${rounds}`);
line('first push of a session', ours.first, native.first);
line('push after a turn changing 10 files', ours.turn, native.turn);
console.log('(ours: a ref discovery, then the head and the manifest, each a push of its own; git push: the head only)');
