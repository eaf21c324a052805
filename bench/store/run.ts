/**
 * Store growth and reads, with and without deltas (issue #22, "store
 * growth"). A repository of realistic source files (a few hundred, 200 to
 * 2,000 lines each) takes N turns of 20 one-line edits each, recorded by the
 * real server over a WebSocket (`harness/turnStarted`, edits,
 * `harness/turnEnded`); the same states are committed to a bare copy of the
 * repository, one commit per turn. Printed:
 *
 * - bytes per turn: the shadow store's packs before compaction (every
 *   object whole, as each flush writes it) and after (`compact`), against
 *   git's delta pack of the same commits (`git repack -adf`, and with
 *   `--window=250 --depth=50` as `gc --aggressive` does) less the pack of
 *   the first commit alone; and `git repack -adfl` of a copy of the store
 *   itself (the same objects, with the same constraint: no base outside);
 * - where the bytes of the compacted pack go (`git verify-pack -v`);
 * - reads, rounds alternated: every version of the changed files, and every
 *   turn's changes (tree diff and both sides of each file), from the store
 *   before and after compaction (fresh store each round), against
 *   `git cat-file --batch` of the same blobs on git's pack.
 *
 *   npm run bench -- store [--files 300] [--turns 60] [--edits 20] [--rounds 7] [--depth 50]
 *   npm run bench -- store --overlap [--rounds 7]   (a turn end beside a compaction: `overlap.ts`)
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Harness } from '../common/harness.js';
import { ChangesetService } from '../../server/service.js';
import { openWorkspaceStore, type WorkspaceStore } from '../../server/store/index.js';
import { git, gitEnv, median } from '../common/workspace.js';
import { overlapBench } from './overlap.js';

const argv = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : fallback;
};
const FILES = Number(option('files', '300'));
const TURNS = Number(option('turns', '60'));
const EDITS = Number(option('edits', '20'));
const ROUNDS = Number(option('rounds', '7'));
const DEPTH = Number(option('depth', '50'));
process.env['CHANGESET_SERVER_VERIFY_IDLE_MS'] ??= '600000';

let seed = 12345;
const random = (): number => {
  seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
  return seed / 0x80000000;
};
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;

const WORDS =
  'value result index count buffer state request response session turn change file path entry store reader writer cache options handler error message client server channel token offset length parse format render update remove create'.split(
    ' ',
  );
const TYPES = ['string', 'number', 'boolean', 'Uint8Array', 'readonly string[]', 'Map<string, number>', 'Promise<void>'];
const ident = (): string => pick(WORDS) + pick(WORDS).replace(/^./, (c) => c.toUpperCase());

/** One line of TypeScript-looking source, varied enough to compress as real code does (3–4×). */
function sourceLine(depth: number): string {
  const pad = '  '.repeat(depth);
  switch (Math.floor(random() * 9)) {
    case 0:
      return `${pad}const ${ident()} = ${ident()}(${ident()}, ${Math.floor(random() * 1000)});`;
    case 1:
      return `${pad}if (${ident()}.${pick(WORDS)} > ${Math.floor(random() * 100)}) return ${ident()};`;
    case 2:
      return `${pad}// ${pick(WORDS)} the ${pick(WORDS)} of each ${pick(WORDS)} before the ${pick(WORDS)} is ${pick(WORDS)}d`;
    case 3:
      return `${pad}${ident()}.${pick(WORDS)}(${JSON.stringify(`${pick(WORDS)} ${pick(WORDS)}`)});`;
    case 4:
      return `${pad}let ${ident()}: ${pick(TYPES)} = ${pick(['undefined', '0', "''", '[]', 'new Map()'])};`;
    case 5:
      return `${pad}for (const ${pick(WORDS)} of ${ident()}) ${ident()}.push(${pick(WORDS)}.${pick(WORDS)});`;
    case 6:
      return `${pad}throw new Error(\`${pick(WORDS)} \${${pick(WORDS)}} is not a ${pick(WORDS)}\`);`;
    case 7:
      return `${pad}return { ${pick(WORDS)}: ${ident()}, ${pick(WORDS)}: ${Math.floor(random() * 50)} };`;
    default:
      return `${pad}await this.${ident()}(${ident()}, { ${pick(WORDS)}: true });`;
  }
}

function sourceFile(lines: number): string {
  const out: string[] = [`import { ${ident()}, ${ident()} } from './${pick(WORDS)}.js';`, ''];
  while (out.length < lines) {
    out.push(`export async function ${ident()}(${pick(WORDS)}: ${pick(TYPES)}): Promise<${pick(TYPES)}> {`);
    const body = 5 + Math.floor(random() * 25);
    for (let i = 0; i < body && out.length < lines - 2; i++) out.push(sourceLine(1 + Math.floor(random() * 2)));
    out.push('}', '');
  }
  return `${out.join('\n')}\n`;
}

const pathOf = (i: number): string => `src/pkg${i % 12}/mod${Math.floor(i / 12) % 5}/file${i}.ts`;

/** Bytes of the `.pack` files (indexes left out on both sides: they only map ids to offsets). */
function packBytes(objectsDir: string): number {
  const dir = join(objectsDir, 'pack');
  let total = 0;
  for (const name of readdirSync(dir)) if (name.endsWith('.pack')) total += statSync(join(dir, name)).size;
  return total;
}

/** Bytes of git's delta pack of everything `rev` reaches (`git pack-objects --revs`, default window and depth unless given). */
function gitPackOf(gitDir: string, rev: string, args: string[] = []): number {
  return execFileSync('git', ['pack-objects', '--revs', '--stdout', '-q', ...args], {
    env: { ...gitEnv, GIT_DIR: gitDir },
    input: `${rev}\n`,
    maxBuffer: 1 << 30,
  }).byteLength;
}

function shadowDirOf(stateDir: string): string {
  const ws = join(stateDir, 'workspaces');
  return join(ws, readdirSync(ws)[0]!, 'shadow.git');
}

const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;
const load = (): string => loadavg()[0]!.toFixed(1);

/** git with input on stdin. */
function gitIn(gitDir: string, args: string[], input: string): string {
  return execFileSync('git', args, { env: { ...gitEnv, GIT_DIR: gitDir }, input, encoding: 'utf8', maxBuffer: 1 << 30 });
}

/** Reads every blob version, then every turn's changes, through a freshly opened store; times in ms (elapsed and CPU). */
async function readOurs(
  stateDir: string,
  repo: string,
  blobs: readonly string[],
): Promise<{ blobs: number; blobsCpu: number; diffs: number; diffsCpu: number }> {
  const store: WorkspaceStore = await openWorkspaceStore({ stateDir, workspaceDir: repo, compactAfterIdleMs: Number.POSITIVE_INFINITY });
  try {
    const sessions = await store.listSessions();
    const checkpoints = (await Promise.all(sessions.map((s) => store.listSessionCheckpoints(s.sessionId)))).flat();
    let t0 = performance.now();
    let c0 = process.cpuUsage();
    for (const oid of blobs) await store.readObject(oid);
    const blobsMs = performance.now() - t0;
    const blobsCpu = cpuMs(c0);
    const pairs: [string, string][] = [];
    for (let i = 0; i < checkpoints.length; i++) {
      const c = checkpoints[i]!;
      if (c.kind !== 'end') continue;
      const start = checkpoints
        .slice(0, i)
        .reverse()
        .find((s) => s.kind === 'start' && s.turnId === c.turnId);
      if (start) pairs.push([start.tree, c.tree]);
    }
    t0 = performance.now();
    c0 = process.cpuUsage();
    for (const [a, b] of pairs) {
      for (const change of await store.diffTrees(a, b)) {
        if (change.before) await store.readObject(change.before.oid);
        if (change.after) await store.readObject(change.after.oid);
      }
    }
    return { blobs: blobsMs, blobsCpu, diffs: performance.now() - t0, diffsCpu: cpuMs(c0) };
  } finally {
    await store.close();
  }
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
}

async function main(): Promise<void> {
  console.log(`store bench: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, node ${process.version}, ${git(tmpdir(), ['--version']).trim()}`);
  console.log(`${FILES} files of 200–2,000 lines, ${TURNS} turns of ${EDITS} one-line edits; load average at start ${load()}`);
  const work = mkdtempSync(join(tmpdir(), 'bench-store-'));
  try {
    const repo = join(work, 'repo');
    mkdirSync(repo);
    const lines = new Map<string, string[]>();
    for (let i = 0; i < FILES; i++) {
      const path = pathOf(i);
      mkdirSync(join(repo, path, '..'), { recursive: true });
      const text = sourceFile(200 + Math.floor(random() * 1800));
      writeFileSync(join(repo, path), text);
      lines.set(path, text.split('\n'));
    }
    git(repo, ['init', '-q', '-b', 'main']);
    git(repo, ['config', 'gc.auto', '0']);
    git(repo, ['add', '-A']);
    git(repo, ['commit', '-q', '-m', 'initial']);
    const anchor = join(work, 'anchor.git');
    git(work, ['clone', '-q', '--bare', repo, anchor]);
    git(anchor, ['config', 'gc.auto', '0']);
    const anchorEnv = { ...gitEnv, GIT_DIR: anchor, GIT_WORK_TREE: repo, GIT_INDEX_FILE: join(work, 'anchor-index') };
    git(repo, ['read-tree', 'HEAD'], anchorEnv);
    const repackGit = (args: string[]): number => {
      git(anchor, ['repack', '-q', ...args], { ...gitEnv, GIT_DIR: anchor });
      return packBytes(join(anchor, 'objects'));
    };
    const git0 = repackGit(['-adf']);
    const git0Aggressive = repackGit(['-adf', '--window=250', '--depth=50']);
    const sourceBytes = [...lines.values()].reduce((n, l) => n + l.join('\n').length + 1, 0);
    console.log(`repository: ${kb(sourceBytes)} of source; git's pack of its first commit ${kb(git0)}`);

    const stateDir = join(work, 'state');
    const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir, log: () => undefined });
    const { url } = await service.start();
    const session = await service.openWorkspace([repo], { resume: false });
    const harness = await Harness.connect(url, 'bench-store');
    const paths = [...lines.keys()];
    const turnEnd: number[] = [];
    const half = Math.floor(TURNS / 2);
    const halfState = join(work, 'state-half');
    let halfCommit = '';
    try {
      for (let t = 1; t <= TURNS; t++) {
        const turnId = `turn-${t}`;
        await harness.request('harness/turnStarted', { channel: session.uri, turnId });
        const touched = new Set<string>();
        for (let k = 0; k < EDITS; k++) {
          const path = pick(paths);
          const text = lines.get(path)!;
          const at = Math.floor(random() * (text.length - 1));
          text[at] = /\d+/.test(text[at]!) ? text[at]!.replace(/\d+/, String(Math.floor(random() * 10_000))) : `${text[at]} // turn ${t}`;
          touched.add(path);
        }
        for (const path of touched) writeFileSync(join(repo, path), lines.get(path)!.join('\n'));
        const t0 = performance.now();
        await harness.request('harness/turnEnded', { channel: session.uri, turnId });
        turnEnd.push(performance.now() - t0);
        git(repo, ['add', '-A'], anchorEnv);
        git(repo, ['commit', '-q', '-m', `turn ${t}`], anchorEnv);
        if (t === half) {
          // The store as it is halfway (every flush is done once turnEnded answers), without the running server's lock.
          cpSync(stateDir, halfState, { recursive: true });
          rmSync(join(shadowDirOf(halfState), 'changeset-server.lock'), { force: true });
          halfCommit = git(anchor, ['rev-parse', 'HEAD'], { ...gitEnv, GIT_DIR: anchor }).trim();
        }
      }
    } finally {
      harness.close();
      await service.stop();
    }
    console.log(`recorded ${TURNS} turns (turn end median ${median(turnEnd).toFixed(0)} ms); load average ${load()}`);

    const shadow = shadowDirOf(stateDir);
    const asFlushed = packBytes(join(shadow, 'objects'));
    // The store as it was before deltas: every object whole at zlib level 1, in one pack (git pack-objects with no delta window).
    const wholeState = join(work, 'state-whole');
    cpSync(stateDir, wholeState, { recursive: true });
    const wholeShadow = shadowDirOf(wholeState);
    const wholePackDir = join(wholeShadow, 'objects', 'pack');
    const wholeEnv = { ...gitEnv, GIT_DIR: wholeShadow };
    const listed = execFileSync('git', ['rev-list', '--objects', '--all'], { env: wholeEnv, maxBuffer: 1 << 30 });
    const wholeTmp = join(work, 'whole-pack');
    mkdirSync(wholeTmp);
    execFileSync('git', ['pack-objects', '--local', '--no-reuse-object', '--window=0', '--depth=0', '--compression=1', '-q', join(wholeTmp, 'pack')], {
      env: wholeEnv,
      input: listed,
    });
    for (const name of readdirSync(wholePackDir)) rmSync(join(wholePackDir, name));
    for (const name of readdirSync(wholeTmp)) cpSync(join(wholeTmp, name), join(wholePackDir, name));
    const oursWhole = packBytes(join(wholeShadow, 'objects'));
    const store = await openWorkspaceStore({ stateDir, workspaceDir: repo, compactAfterIdleMs: Number.POSITIVE_INFINITY });
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const report = await store.compact({ force: true, maxDepth: DEPTH });
    const compactMs = performance.now() - t0;
    const compactCpu = cpuMs(c0);
    await store.close();
    const oursDelta = packBytes(join(shadow, 'objects'));
    const halfStore = await openWorkspaceStore({ stateDir: halfState, workspaceDir: repo, compactAfterIdleMs: Number.POSITIVE_INFINITY });
    await halfStore.compact({ force: true, maxDepth: DEPTH });
    await halfStore.close();
    const oursHalf = packBytes(join(shadowDirOf(halfState), 'objects'));
    console.log(
      `compaction: ${report.packsBefore} packs → ${report.packsAfter}, ${report.planned} objects planned as deltas, ${compactMs.toFixed(0)} ms (${compactCpu.toFixed(0)} ms CPU); load average ${load()}`,
    );

    const git1 = repackGit(['-adf']);
    const git1Aggressive = repackGit(['-adf', '--window=250', '--depth=50']);
    git(anchor, ['repack', '-q', '-adf'], { ...gitEnv, GIT_DIR: anchor });
    const gitHalf = gitPackOf(anchor, halfCommit);
    const gitFull = gitPackOf(anchor, 'HEAD');
    // git's best pack of exactly the store's objects: the same store copied, repacked locally (no base outside it).
    const sameObjects = join(work, 'same-objects');
    cpSync(shadow, sameObjects, { recursive: true });
    git(work, ['--git-dir', sameObjects, 'repack', '-q', '-adfl']);
    const gitSame = packBytes(join(sameObjects, 'objects'));

    const perTurn = (bytes: number): number => bytes / TURNS;
    const gitTurn = perTurn(git1 - git0);
    const gitAggressiveTurn = perTurn(git1Aggressive - git0Aggressive);
    console.log('\nbytes per turn (.pack files), over all turns:');
    console.log(`  ours before, every object whole at zlib level 1: ${kb(perTurn(oursWhole))}   ${(perTurn(oursWhole) / gitTurn).toFixed(1)}× git`);
    console.log(`  ours as flushed now, before compaction: ${kb(perTurn(asFlushed))}`);
    console.log(`  ours, compacted with deltas:        ${kb(perTurn(oursDelta))}   ${(perTurn(oursDelta) / gitTurn).toFixed(2)}× git`);
    console.log(`  git repack -adf, same commits:      ${kb(gitTurn)}`);
    console.log(`  git repack -adf --window=250 --depth=50: ${kb(gitAggressiveTurn)}   (ours ${(perTurn(oursDelta) / gitAggressiveTurn).toFixed(2)}×)`);
    console.log(`  git repack -adfl of the store's own objects: ${kb(perTurn(gitSame))}   (ours ${(oursDelta / gitSame).toFixed(2)}×)`);
    const late = TURNS - half;
    const oursLate = (oursDelta - oursHalf) / late;
    const gitLate = (gitFull - gitHalf) / late;
    console.log(`over the last ${late} turns (compacted store after ${TURNS} turns less after ${half}; git's pack of the same commits likewise):`);
    console.log(`  ours ${kb(oursLate)}   git ${kb(gitLate)}   ${(oursLate / gitLate).toFixed(2)}× git`);

    // Where the compacted pack's bytes go.
    const packDir = join(shadow, 'objects', 'pack');
    const idx = readdirSync(packDir).find((n) => n.endsWith('.idx'))!;
    const parts = new Map<string, { n: number; bytes: number }>();
    for (const line of git(packDir, ['verify-pack', '-v', join(packDir, idx)]).split('\n')) {
      const m = /^[0-9a-f]{40} (\w+)\s+\d+ (\d+) \d+( \d+ [0-9a-f]{40})?$/.exec(line);
      if (!m) continue;
      const key = `${m[1]} ${m[3] ? 'delta' : 'whole'}`;
      const part = parts.get(key) ?? { n: 0, bytes: 0 };
      part.n++;
      part.bytes += Number(m[2]);
      parts.set(key, part);
    }
    console.log('\nwhere the compacted pack goes (per turn):');
    for (const [key, part] of [...parts].sort((a, b) => b[1].bytes - a[1].bytes))
      console.log(`  ${key.padEnd(13)} ${String(part.n).padStart(6)} entries  ${kb(part.bytes / TURNS)}`);
    const firstCopies = new Set<string>();
    for (const path of paths) {
      const changed = git(repo, ['rev-list', '--count', 'HEAD~' + TURNS + '..HEAD', '--', path], anchorEnv).trim();
      if (Number(changed) > 0) firstCopies.add(path);
    }
    console.log(
      `  files changed at least once: ${firstCopies.size} of ${FILES} (each has a whole version in the store: its base is in the workspace repository)`,
    );

    // Reads.
    const objects = git(anchor, ['rev-list', '--objects', '--reverse', `HEAD~${TURNS}..HEAD`], { ...gitEnv, GIT_DIR: anchor })
      .split('\n')
      .map((l) => l.slice(0, 40))
      .filter((l) => l.length === 40);
    const types = gitIn(anchor, ['cat-file', '--batch-check=%(objecttype)'], objects.join('\n')).split('\n');
    const blobs = objects.filter((_, i) => types[i] === 'blob');
    const sides = {
      whole: [] as number[],
      delta: [] as number[],
      git: [] as number[],
      wholeCpu: [] as number[],
      deltaCpu: [] as number[],
      wholeDiff: [] as number[],
      deltaDiff: [] as number[],
      wholeDiffCpu: [] as number[],
      deltaDiffCpu: [] as number[],
    };
    const loads: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      loads.push(load());
      const order = ['whole', 'delta', 'git'];
      for (let r = 0; r < round % 3; r++) order.push(order.shift()!);
      for (const side of order) {
        if (side === 'git') {
          const g0 = performance.now();
          gitIn(anchor, ['cat-file', '--batch'], blobs.join('\n'));
          sides.git.push(performance.now() - g0);
        } else {
          const r = await readOurs(side === 'whole' ? wholeState : stateDir, repo, blobs);
          const s = side as 'whole' | 'delta';
          sides[s].push(r.blobs);
          sides[`${s}Cpu`].push(r.blobsCpu);
          sides[`${s}Diff`].push(r.diffs);
          sides[`${s}DiffCpu`].push(r.diffsCpu);
        }
      }
    }
    const spread = (xs: number[]): string => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
    console.log(`\nreads, ${blobs.length} blob versions, ${ROUNDS} rounds alternated (load average per round: ${loads.join(', ')}):`);
    console.log(
      `  every version, store before (whole, level 1): ${median(sides.whole).toFixed(0)} ms (${spread(sides.whole)}), CPU ${median(sides.wholeCpu).toFixed(0)} ms`,
    );
    console.log(
      `  every version, store compacted:               ${median(sides.delta).toFixed(0)} ms (${spread(sides.delta)}), CPU ${median(sides.deltaCpu).toFixed(0)} ms`,
    );
    console.log(`  every version, git cat-file --batch:          ${median(sides.git).toFixed(0)} ms (${spread(sides.git)})`);
    const ratios = sides.delta.map((d, i) => d / sides.whole[i]!);
    console.log(
      `  compacted / before: ${median(ratios).toFixed(2)} (per round ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}); compacted / git: ${(median(sides.delta) / median(sides.git)).toFixed(2)}`,
    );
    const diffRatios = sides.deltaDiff.map((d, i) => d / sides.wholeDiff[i]!);
    console.log(
      `  every turn's changes (tree diff, both sides of each file): before ${median(sides.wholeDiff).toFixed(0)} ms (${spread(sides.wholeDiff)}), CPU ${median(sides.wholeDiffCpu).toFixed(0)}; compacted ${median(sides.deltaDiff).toFixed(0)} ms (${spread(sides.deltaDiff)}), CPU ${median(sides.deltaDiffCpu).toFixed(0)}; ratio ${median(diffRatios).toFixed(2)} (${Math.min(...diffRatios).toFixed(2)}–${Math.max(...diffRatios).toFixed(2)})`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (argv.includes('--overlap')) await overlapBench(ROUNDS);
else await main();
