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
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { changesetUriTemplate, expandChangesetUri } from '../../protocol/index.js';
import { ChangesetService } from '../../server/service.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const FILES = Number(args.get('files') ?? 20_000);
const CHANGED = Number(args.get('changed') ?? 100);
const CLIENTS = Number(args.get('clients') ?? 10);
const REPS = Number(args.get('reps') ?? 7);

const gitEnv = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' };
const git = (cwd: string, argv: string[], env: NodeJS.ProcessEnv = gitEnv) => execFileSync('git', argv, { cwd, env, encoding: 'utf8', maxBuffer: 1 << 28 });

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function fileAt(i: number): string {
  const d = Math.floor(i / 10);
  return join(`pkg${Math.floor(d / 100)}`, `mod${Math.floor(d / 10) % 10}`, `dir${d % 10}`, `file${i % 10}.ts`);
}

function generate(root: string): void {
  for (let i = 0; i < FILES; i++) {
    const path = join(root, fileAt(i));
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, `// file ${i}\nexport const v = ${i};\n`.repeat(1 + (i % 20)));
  }
  git(root, ['init', '-q', '-b', 'main']);
  git(root, ['config', 'gc.auto', '0']);
  git(root, ['add', '-A']);
  git(root, ['commit', '-q', '-m', 'initial']);
}

/** Rewrites `CHANGED` files spread over the tree (a different set each round). */
function editFiles(root: string, round: number): void {
  const step = Math.floor(FILES / CHANGED);
  for (let k = 0; k < CHANGED; k++) {
    const i = (k * step + round * 7) % FILES;
    writeFileSync(join(root, fileAt(i)), `// file ${i} round ${round}\nexport const v = ${i};\nexport const r = ${round};\n`);
  }
}

class Client {
  private id = 0;
  private readonly pending = new Map<number, (m: Record<string, unknown>) => void>();
  private readyWaiters: { uri: string; resolve: () => void }[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString()) as Record<string, unknown>;
      if (typeof m['id'] === 'number') this.pending.get(m['id'])?.(m);
      const params = m['params'] as { channel?: string; action?: { type: string; status?: string } } | undefined;
      if (m['method'] === 'action' && params?.action?.type === 'changeset/statusChanged' && params.action.status === 'ready') {
        for (const w of this.readyWaiters.filter((x) => x.uri === params.channel)) w.resolve();
        this.readyWaiters = this.readyWaiters.filter((x) => x.uri !== params.channel);
      }
    });
  }

  static async connect(url: string): Promise<Client> {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const client = new Client(ws);
    await client.request('initialize', { channel: 'ahp-root://', protocolVersions: ['0.6.0'], clientId: `bench-${Math.random()}`, initialSubscriptions: [] });
    return client;
  }

  request(method: string, params: unknown): Promise<Record<string, unknown>> {
    const id = ++this.id;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  waitReady(uri: string): Promise<void> {
    return new Promise((resolve) => this.readyWaiters.push({ uri, resolve }));
  }
}

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
    generate(repo);
    const index = join(work, 'git-index');
    copyFileSync(join(repo, '.git', 'index'), index);
    const recipe = new GitRecipe(repo, { ...gitEnv, GIT_INDEX_FILE: index });

    // Ours: the whole product in this process, clients over real WebSockets.
    const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir: join(work, 'state'), log: () => undefined });
    const { url } = await service.start();
    const session = await service.openWorkspace([repo], { resume: false });
    const clients = await Promise.all(Array.from({ length: CLIENTS }, () => Client.connect(url)));
    let edits = 0;

    const oursRound = async (round: number): Promise<number> => {
      const turnId = `round-${round}`;
      await clients[0]!.request('harness/turnStarted', { channel: session.uri, turnId });
      const uri = expandChangesetUri(changesetUriTemplate(session.id, 'turn'), { turnId });
      await Promise.all(clients.map((c) => c.request('subscribe', { channel: uri })));
      editFiles(repo, edits++);
      const ready = Promise.all(clients.map((c) => c.waitReady(uri)));
      const t0 = performance.now();
      await clients[0]!.request('harness/turnEnded', { channel: session.uri, turnId });
      await ready;
      return performance.now() - t0;
    };
    const gitRound = (): number => {
      recipe.baseline();
      editFiles(repo, edits++);
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
