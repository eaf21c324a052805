/**
 * Changeset benchmark: the time from the end of a 100-file turn on a
 * 20,000-file repository until 10 subscribed clients see its `turn`
 * changeset `ready` (end snapshot, tree diff, counts, hashes, files, fan-out
 * over real WebSockets) — against native git's turn-end recipe on the same
 * repository (private index: `git add -A`, `git write-tree`,
 * `git diff-tree -r -M --numstat`), which yields only the file list with
 * counts. Ours and git alternate round by round in one run; each round
 * starts from a baseline (ours: `turnStarted`; git: its private index
 * caught up), so both time exactly the files changed in that round.
 *
 *   npm run bench -- changesets [--files 20000] [--changed 100] [--clients 10] [--reps 7]
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { changesetUriTemplate, expandChangesetUri } from '../../protocol/index.js';
import { ChangesetService } from '../../server/service.js';
import { BenchClient } from '../common/bench-client.js';
import { editFiles, generateRepository, git, gitEnv, median } from '../common/workspace.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const FILES = Number(args.get('files') ?? 20_000);
const CHANGED = Number(args.get('changed') ?? 100);
const CLIENTS = Number(args.get('clients') ?? 10);
const REPS = Number(args.get('reps') ?? 7);

/** Native git's turn-end recipe with its own private index, baselined before each round like a turn start. */
class GitRecipe {
  private before = '';

  constructor(
    private readonly repo: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** Untimed, like `turnStarted`: the index and the before-tree catch up with everything done so far. */
  baseline(): void {
    git(this.repo, ['add', '-A'], this.env);
    this.before = git(this.repo, ['write-tree'], this.env).trim();
  }

  /** Timed: what a turn end costs git. */
  turnEnd(): void {
    git(this.repo, ['add', '-A'], this.env);
    const after = git(this.repo, ['write-tree'], this.env).trim();
    git(this.repo, ['diff-tree', '-r', '-M', '--numstat', this.before, after], this.env);
  }
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'bench-changesets-'));
  try {
    const repo = join(work, 'repo');
    mkdirSync(repo);
    console.log(`generating ${FILES} files…`);
    generateRepository(repo, FILES);
    const index = join(work, 'git-index');
    copyFileSync(join(repo, '.git', 'index'), index);
    const recipe = new GitRecipe(repo, { ...gitEnv, GIT_INDEX_FILE: index });

    // Ours: the whole product in this process, clients over real WebSockets.
    const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir: join(work, 'state'), log: () => undefined });
    const { url } = await service.start();
    const session = await service.openWorkspace([repo], { resume: false });
    const clients = await Promise.all(Array.from({ length: CLIENTS }, () => BenchClient.connect(url)));
    let edits = 0;

    const oursRound = async (round: number): Promise<number> => {
      const turnId = `round-${round}`;
      await clients[0]!.request('harness/turnStarted', { channel: session.uri, turnId });
      const uri = expandChangesetUri(changesetUriTemplate(session.id, 'turn'), { turnId });
      await Promise.all(clients.map((c) => c.request('subscribe', { channel: uri })));
      editFiles(repo, FILES, CHANGED, edits++);
      const ready = Promise.all(clients.map((c) => c.waitReady(uri)));
      const t0 = performance.now();
      await clients[0]!.request('harness/turnEnded', { channel: session.uri, turnId });
      await ready;
      return performance.now() - t0;
    };
    const gitRound = (): number => {
      recipe.baseline();
      editFiles(repo, FILES, CHANGED, edits++);
      const t0 = performance.now();
      recipe.turnEnd();
      return performance.now() - t0;
    };

    // A warm-up round each, then ours and git alternate round by round (and who goes first), so drifting load hits both.
    await oursRound(-1);
    gitRound();
    const ours: number[] = [];
    const anchor: number[] = [];
    for (let round = 0; round < REPS; round++) {
      if (round % 2 === 0) {
        ours.push(await oursRound(round));
        anchor.push(gitRound());
      } else {
        anchor.push(gitRound());
        ours.push(await oursRound(round));
      }
    }
    for (const c of clients) c.ws.close();
    await service.stop();

    const o = median(ours);
    const g = median(anchor);
    console.log(`\n${FILES} files, ${CHANGED} changed per turn, ${CLIENTS} subscribers, ${REPS} rounds alternated (median ms)`);
    console.log(`  ours: turn end -> turn changeset ready at all ${CLIENTS} clients  ${o.toFixed(1)} ms   (runs: ${ours.map((x) => x.toFixed(0)).join(' ')})`);
    console.log(`  git:  add -A + write-tree + diff-tree -r -M --numstat            ${g.toFixed(1)} ms   (runs: ${anchor.map((x) => x.toFixed(0)).join(' ')})`);
    console.log(`  ratio ours/git: ${(o / g).toFixed(2)}x (per-round ratios: ${ours.map((x, i) => (x / anchor[i]!).toFixed(2)).join(' ')})`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
