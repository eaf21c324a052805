/**
 * File history benchmark: `fileHistory` for one file of a session of many
 * turns (over a real WebSocket, the whole product in this process), against
 * native git answering the same question over the same history kept as
 * commits — `git log --numstat --format=%H -- <file>`: every commit that
 * changed the file, with its lines added and removed. Each turn edits
 * `--changed` files and the measured file every third turn; after the turn
 * ends the working tree is committed, so git holds one commit per turn.
 * Ours and git alternate query by query in one run.
 *
 *   npm run bench -- file-history [--files 2000] [--turns 60] [--changed 20] [--reps 15]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChangesetService } from '../../server/service.js';
import { BenchClient } from '../common/bench-client.js';
import { alternated, editFiles, fileAt, generateRepository, git, gitEnv, median } from '../common/workspace.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const FILES = Number(args.get('files') ?? 2_000);
const TURNS = Number(args.get('turns') ?? 60);
const CHANGED = Number(args.get('changed') ?? 20);
const REPS = Number(args.get('reps') ?? 15);

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'bench-file-history-'));
  try {
    const repo = join(work, 'repo');
    mkdirSync(repo);
    console.log(`generating ${FILES} files…`);
    generateRepository(repo, FILES);
    const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir: join(work, 'state'), log: () => undefined });
    const { url } = await service.start();
    const session = await service.openWorkspace([repo], { resume: false });
    const client = await BenchClient.connect(url);
    const target = fileAt(1);
    console.log(`recording ${TURNS} turns…`);
    for (let t = 0; t < TURNS; t++) {
      const turnId = `t${t}`;
      await client.request('harness/turnStarted', { channel: session.uri, turnId });
      editFiles(repo, FILES, CHANGED, t);
      if (t % 3 === 0) writeFileSync(join(repo, target), `// the measured file, turn ${t}\n`.repeat(1 + (t % 7)));
      await client.request('harness/turnEnded', { channel: session.uri, turnId });
      git(repo, ['add', '-A']);
      git(repo, ['commit', '-q', '-m', turnId]);
    }

    let entries = 0;
    const ours = async (): Promise<number> => {
      const t0 = performance.now();
      const answer = await client.request('fileHistory', { session: session.uri, path: target });
      const ms = performance.now() - t0;
      entries = (answer['result'] as { entries: unknown[] }).entries.length;
      return ms;
    };
    let commits = 0;
    const anchor = (): number => {
      const t0 = performance.now();
      const out = spawnSync('git', ['log', '--numstat', '--format=%H', '--', target], { cwd: repo, env: gitEnv, encoding: 'utf8' });
      const ms = performance.now() - t0;
      commits = out.stdout.split('\n').filter((l) => /^[0-9a-f]{40}$/.test(l)).length;
      return ms;
    };

    // A warm-up each (ours: the first lookups fill the tree cache), then alternated, who goes first swapping.
    const cold = { ours: await ours(), git: anchor() };
    const { ours: o, anchor: g, loads } = await alternated(REPS, ours, anchor);
    client.ws.close();
    await service.stop();

    const om = median(o);
    const gm = median(g);
    const ratios = o.map((x, i) => x / g[i]!).sort((a, b) => a - b);
    console.log(
      `\n${FILES} files, ${TURNS} turns of ${CHANGED} changed files, the measured file changed in ${entries} turns (git: ${commits} commits, the first included)`,
    );
    console.log(`  ours: fileHistory over a WebSocket              ${om.toFixed(1)} ms   (runs: ${o.map((x) => x.toFixed(1)).join(' ')})`);
    console.log(`  git:  log --numstat -- <file> (a process)       ${gm.toFixed(1)} ms   (runs: ${g.map((x) => x.toFixed(1)).join(' ')})`);
    console.log(`  ratio ours/git: ${(om / gm).toFixed(2)}x (per-query ratios ${ratios[0]!.toFixed(2)}–${ratios.at(-1)!.toFixed(2)})`);
    console.log(`  first query (ours reads every tree on the path for the first time): ours ${cold.ours.toFixed(1)} ms, git ${cold.git.toFixed(1)} ms`);
    console.log(`  load average (1 min) during the queries: ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
