/**
 * What the commit-time attribution adds to what the watcher sees of a commit.
 * A recorded session over a generated repository (500 files, 20 turns of
 * history), then rounds of: an agent turn editing five files, a line the
 * user types, and a real `git commit -a`. For each commit, "ours" is the
 * time from the file watcher delivering the commit's HEAD reflog update to
 * the commit being linked to its turn (attributed from the record, stored
 * in the session's store, shown on the turn) — with `--notes` also the
 * authorship note written into the repository; the anchor is `git show
 * --numstat` of the same commit (the diff a tool reading commits runs), and
 * the two alternate which goes first. Medians, spread and the ratio are
 * printed, with the load average before and after each phase.
 *
 *   npm run bench -- commit-attribution [--rounds 15]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ChangesetService } from '../../server/service.js';
import type { RecordingSession } from '../../server/session/recording-session.js';
import { DirectoryWatcher } from '../../server/watch/directory-watcher.js';
import { fileAt, generateRepository, git, gitEnv, median } from '../common/workspace.js';

const argv = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : fallback;
};
const ROUNDS = Number(option('rounds', '15'));
const FILES = 500;
const HISTORY_TURNS = 20;
const FILES_PER_TURN = 5;
const LINES_PER_FILE = 8;

const readText = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

async function turn(session: RecordingSession, n: number, files: number[]): Promise<string> {
  const handle = await session.startTurn({ message: `turn ${n}` });
  const paths = files.map(fileAt);
  await session.beforeEdit(handle.id, paths, { tool: 'Edit' });
  for (const rel of paths) {
    const abs = join(session.workingDirectories[0]!, rel);
    const added = Array.from({ length: LINES_PER_FILE }, (_, i) => `export const t${n}_${i} = ${i};\n`).join('');
    writeFileSync(abs, readFileSync(abs, 'utf8') + added);
  }
  await session.endTurn(handle.id);
  return handle.id;
}

async function phase(notes: boolean): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'bench-commit-attribution-'));
  const stateDir = mkdtempSync(join(tmpdir(), 'bench-commit-attribution-state-'));
  const repo = join(root, 'repo');
  execFileSync('mkdir', ['-p', repo]);
  git(repo, ['init', '-q', '-b', 'main']);
  generateRepository(repo, FILES);
  const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir, log: () => undefined, ...(notes ? { notes: true } : {}) });
  await service.start();
  const session = await service.openWorkspace([repo]);
  await session.started;
  const loadBefore = load();
  for (let n = 1; n <= HISTORY_TURNS; n++)
    await turn(
      session,
      n,
      [n * 7, n * 11 + 1, n * 13 + 2].map((i) => i % FILES),
    );
  git(repo, ['commit', '-q', '-am', 'history']);
  await new Promise((r) => setTimeout(r, 500));

  // When the watcher delivers the HEAD reflog update: what the watcher sees of a commit.
  const watcher = DirectoryWatcher.acquire(session.workingDirectories[0]!);
  let seen = 0;
  let seenCpu = process.cpuUsage();
  const stop = watcher.onEvents((events) => {
    if (seen === 0 && events.some((e) => e.path.endsWith(join('.git', 'logs', 'HEAD')))) {
      seen = performance.now();
      seenCpu = process.cpuUsage();
    }
  });
  const ours: number[] = [];
  const anchor: number[] = [];
  const oursCpu: number[] = [];
  const anchorCpu: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const turnNumber = HISTORY_TURNS + r + 1;
    const files = Array.from({ length: FILES_PER_TURN }, (_, i) => (r * 37 + i * 53) % FILES);
    const turnId = await turn(session, turnNumber, files);
    const typed = join(repo, fileAt(files[0]!));
    writeFileSync(typed, `// the user's line ${r}\n${readFileSync(typed, 'utf8')}`);
    const anchorFirst = r % 2 === 1;
    const measureAnchor = (oid: string): void => {
      const t = performance.now();
      // bash's `times` prints the processor time of the shell, then of its children: git's user and system time.
      const times = execFileSync('bash', ['-c', `git show --numstat --format=%H ${oid} >/dev/null; times`], { cwd: repo, env: gitEnv, encoding: 'utf8' });
      anchor.push(performance.now() - t);
      const child = times
        .trim()
        .split('\n')[1]!
        .match(/(\d+)m([\d.]+)s/g)!
        .map((x) => {
          const [, m, sec] = /(\d+)m([\d.]+)s/.exec(x)!;
          return Number(m) * 60_000 + Number(sec) * 1000;
        });
      anchorCpu.push(child[0]! + child[1]!);
    };
    const previous = git(repo, ['rev-parse', 'HEAD']).trim();
    if (anchorFirst) measureAnchor(previous);
    seen = 0;
    git(repo, ['commit', '-q', '-am', `round ${r}`]);
    const head = git(repo, ['rev-parse', 'HEAD']).trim();
    const deadline = Date.now() + 30_000;
    const noteRef = join(repo, '.git', 'refs', 'notes', 'ai');
    const notesBefore = notes ? readText(noteRef) : undefined;
    const done = (): boolean => !!session.meta.turns[turnId]?.commits?.some((c) => c.oid === head) && (!notes || readText(noteRef) !== notesBefore);
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`round ${r}: the commit was never linked`);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const linked = performance.now(); // with --notes: once the note's ref moved too
    if (seen === 0) throw new Error(`round ${r}: the watcher never delivered the reflog update`);
    ours.push(linked - seen);
    const cpu = process.cpuUsage(seenCpu);
    oursCpu.push((cpu.user + cpu.system) / 1000);
    if (!anchorFirst) measureAnchor(head);
  }
  stop();
  await watcher.release();
  const loadAfter = load();
  await service.stop();
  rmSync(root, { recursive: true, force: true });
  rmSync(stateDir, { recursive: true, force: true });
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const spread = (xs: number[]) => `${sorted(xs)[0]!.toFixed(1)}–${sorted(xs)[xs.length - 1]!.toFixed(1)}`;
  const label = notes ? 'with --notes' : 'links only  ';
  console.log(
    `${label} elapsed:   ours ${median(ours).toFixed(1)} ms (${spread(ours)}), git show --numstat ${median(anchor).toFixed(1)} ms (${spread(anchor)}), ratio ${(median(ours) / median(anchor)).toFixed(2)}`,
  );
  console.log(
    `${label} processor: ours ${median(oursCpu).toFixed(1)} ms (${spread(oursCpu)}), git show --numstat ${median(anchorCpu).toFixed(1)} ms (${spread(anchorCpu)}), ratio ${(median(oursCpu) / median(anchorCpu)).toFixed(2)}; load ${loadBefore} → ${loadAfter}`,
  );
}

console.log(
  `commit-time attribution: ${FILES} files, ${HISTORY_TURNS} turns of history, ${ROUNDS} commits of ${FILES_PER_TURN} files × ${LINES_PER_FILE} lines (+1 typed), ${cpus().length} cpus`,
);
await phase(false);
await phase(true);
