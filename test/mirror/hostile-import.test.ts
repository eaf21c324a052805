import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as zlib from 'node:zlib';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ROOT_CHANNEL, type ListSessionsResult } from '../../protocol/index.js';
import type { StatusResult } from '../../server/harness/status.js';
import { importMirror, ImportError } from '../../server/mirror/import.js';
import { openWorkspaceStore } from '../../server/store/index.js';
import { writePackIndex } from '../../server/store/pack-index.js';
import { run, startServe } from '../cli/serve-process.js';
import { run as runInProcess } from '../helpers/cli-in-process.js';
import { TestClient } from '../helpers/client.js';
import { GitHttpServer } from '../helpers/git-http-server.js';
import { git, makeRepo, TempDirs } from '../helpers/workspace.js';
import { mirrorSession, rewriteMirror, treeWith, writeBlob, writeRawTree, type RawEntry } from './crafted-mirror.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

// Run `npm run build` first: the first case and the size checks start the built binary; the other commands run in the test's process.
const temp = new TempDirs();
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
  temp.cleanup();
});

const TOKEN = 'hostile-mirror-token-77a1';
const ENV = { CHANGESET_SERVER_MIRROR_TOKEN: TOKEN };

/** Directories and the remote shared by the file's tests, removed after the last one. */
const shared = new TempDirs();
let sharedMirror: Promise<{ root: string; server: GitHttpServer; sessionId: string; machineA: string }> | undefined;
afterAll(async () => {
  const mirror = await sharedMirror?.catch(() => undefined);
  await mirror?.server.stop();
  shared.cleanup();
});

/**
 * A remote root served over smart HTTP, holding `base.git`: one session of
 * one turn mirrored from "machine A". Made once for the file: each test
 * reads `base.git` only, and rewrites copies of it under names of its own.
 */
function servedMirror(): Promise<{ root: string; server: GitHttpServer; sessionId: string; machineA: string }> {
  sharedMirror ??= (async () => {
    const root = shared.make('remote-');
    execFileSync('git', ['init', '-q', '--bare', join(root, 'base.git')]);
    const server = await GitHttpServer.start({ root, token: TOKEN });
    const machineA = makeRepo(shared.make('machine-a-'), { 'a.txt': 'one\n' });
    const { sessionId } = await mirrorSession(server.url('base.git'), ENV, {
      stateDir: shared.make('state-a-'),
      workspaceDir: machineA,
      sessionId: 'crafted-session',
      before: { 'a.txt': 'one\n', 'src/app.js': 'console.log(1);\n' },
      after: { 'a.txt': 'two\n', 'src/app.js': 'console.log(1);\n' },
    });
    return { root, server, sessionId, machineA };
  })();
  return sharedMirror;
}

/** A copy of the base mirror as `name`, rewritten by `edit`; returns its URL and bare directory. */
function variant(mirror: { root: string; server: GitHttpServer }, name: string, edit: (bare: string) => void): { url: string; bare: string } {
  const bare = join(mirror.root, `${name}.git`);
  cpSync(join(mirror.root, 'base.git'), bare, { recursive: true });
  edit(bare);
  return { url: mirror.server.url(`${name}.git`), bare };
}

/** Adds entries to the top of every checkpoint tree except the turn's end (the state a restore of turn 1 brings back). */
function intoTurnStart(bare: string, entries: (bare: string) => RawEntry[], opts: { unsorted?: boolean } = {}): void {
  const extra = entries(bare);
  rewriteMirror(bare, { tree: (tree, trailer) => (trailer['kind'] === 'end' ? undefined : treeWith(bare, tree, extra, opts)) });
}

function shadowDirs(stateDir: string): string[] {
  const dir = join(stateDir, 'workspaces');
  return existsSync(dir) ? readdirSync(dir).map((w) => join(dir, w, 'shadow.git')) : [];
}

/** Every ref and every object an import left in a state directory, and any scratch directory. */
function leftBehind(stateDir: string): { refs: string[]; packs: string[]; scratch: string[] } {
  const out = { refs: [] as string[], packs: [] as string[], scratch: readdirSync(stateDir).filter((n) => n.startsWith('mirror-import-')) };
  for (const shadow of shadowDirs(stateDir)) {
    const refs = execFileSync('git', ['--git-dir', shadow, 'for-each-ref', '--format=%(refname)'], { encoding: 'utf8' }).trim();
    if (refs) out.refs.push(...refs.split('\n'));
    const packDir = join(shadow, 'objects', 'pack');
    if (existsSync(packDir)) out.packs.push(...readdirSync(packDir).filter((n) => n.endsWith('.pack')));
    const loose = readdirSync(join(shadow, 'objects')).filter((n) => /^[0-9a-f]{2}$/.test(n));
    out.packs.push(...loose.flatMap((d) => readdirSync(join(shadow, 'objects', d))));
  }
  return out;
}

describe("a mirror whose turn writes the workspace repository's own files", () => {
  it('is refused whole by the real CLI, naming the entry; a restore of that turn then has nothing to restore; .git/config stays byte-identical and its fsmonitor never runs', async () => {
    const mirror = await servedMirror();
    const checkout = makeRepo(temp.make('checkout-'), { 'a.txt': 'one\n', 'src/app.js': 'console.log(1);\n' });
    const configBefore = readFileSync(join(checkout, '.git', 'config'));
    const ran = join(temp.make('fsmonitor-'), 'ran');
    const hostileConfig = `[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch ${ran}\n[core]\n\thooksPath = /tmp\n`;
    const { url, bare } = variant(mirror, 'dotgit', (b) =>
      intoTurnStart(b, (x) => [{ mode: '40000', name: '.git', oid: writeRawTree(x, [{ mode: '100644', name: 'config', oid: writeBlob(x, hostileConfig) }]) }]),
    );
    const hostileBlob = writeBlob(bare, hostileConfig);

    const state = temp.make('state-b-');
    const imported = await run(['import', url, '--workspace', checkout, '--state-dir', state], { env: ENV });
    expect(imported.code).toBe(1);
    expect(imported.stderr).toContain('refused, nothing was imported');
    expect(imported.stderr).toContain(`session ${mirror.sessionId}`);
    expect(imported.stderr).toContain('".git" is a .git directory');
    // Nothing kept: no ref, no object (the hostile config is nowhere in the store), no scratch copy.
    expect(leftBehind(state)).toEqual({ refs: [], packs: [], scratch: [] });
    for (const shadow of shadowDirs(state)) {
      expect(() => execFileSync('git', ['--git-dir', shadow, 'cat-file', '-e', hostileBlob], { stdio: 'ignore' })).toThrow();
    }

    // A restore of that turn: the server has no such session, and writes nothing.
    const serve = await startServe([checkout, '--state-dir', state]);
    cleanup.push(() => serve.stop());
    const client = await TestClient.connect(serve.ready.url, { token: serve.ready.token! });
    cleanup.push(() => client.close());
    await client.initialize();
    const listed = await client.request<ListSessionsResult>('listSessions', { channel: ROOT_CHANNEL });
    expect(listed.items.map((s) => s.resource)).not.toContain(`ahp-session:/${mirror.sessionId}`);
    const restore = await runInProcess([
      'restore',
      '--turn',
      '1',
      '--session',
      `ahp-session:/${mirror.sessionId}`,
      '--url',
      serve.ready.url,
      '--token',
      serve.ready.token!,
    ]);
    expect(restore.code).not.toBe(0);

    expect(readFileSync(join(checkout, '.git', 'config'))).toEqual(configBefore);
    git(checkout, ['status', '--porcelain']);
    expect(existsSync(ran)).toBe(false);
  }, 60_000);
});

describe('every tree entry from a mirror is checked as git fsck checks it', () => {
  // Each case rewrites turn 1's start with one bad entry; each must refuse the whole import and name it.
  const cases: [string, (bare: string) => RawEntry[], RegExp, { unsorted?: boolean }?][] = [
    [
      '.GIT in upper case',
      (b) => [{ mode: '40000', name: '.GIT', oid: writeRawTree(b, [{ mode: '100644', name: 'config', oid: writeBlob(b, 'x') }]) }],
      /"\.GIT" is a \.git directory/,
    ],
    [
      '.git. with a trailing dot',
      (b) => [{ mode: '40000', name: '.git.', oid: writeRawTree(b, [{ mode: '100644', name: 'config', oid: writeBlob(b, 'x') }]) }],
      /"\.git\." is a name Windows reads as \.git/,
    ],
    [
      'the NTFS short name GIT~1',
      (b) => [{ mode: '40000', name: 'GIT~1', oid: writeRawTree(b, [{ mode: '100644', name: 'config', oid: writeBlob(b, 'x') }]) }],
      /"GIT~1" is a name Windows reads as \.git/,
    ],
    [
      '.git with an HFS+ ignorable character',
      (b) => [{ mode: '40000', name: '.g\u200cit', oid: writeRawTree(b, [{ mode: '100644', name: 'config', oid: writeBlob(b, 'x') }]) }],
      /"\.g\\u200cit" is a name macOS reads as \.git/,
    ],
    [
      '.git inside a subdirectory',
      (b) => [
        {
          mode: '40000',
          name: 'vendor',
          oid: writeRawTree(b, [{ mode: '40000', name: '.git', oid: writeRawTree(b, [{ mode: '100644', name: 'HEAD', oid: writeBlob(b, 'x') }]) }]),
        },
      ],
      /"vendor\/\.git" is a \.git directory/,
    ],
    ['a name with a slash', (b) => [{ mode: '100644', name: 'x/y', oid: writeBlob(b, 'x') }], /"x\/y" has a "\/" in its name/],
    [
      'a dot-dot',
      (b) => [{ mode: '40000', name: '..', oid: writeRawTree(b, [{ mode: '100644', name: 'escaped', oid: writeBlob(b, 'x') }]) }],
      /"\.\." is named "\.\."/,
    ],
    ['a mode git does not use', (b) => [{ mode: '100666', name: 'world-writable', oid: writeBlob(b, 'x') }], /"world-writable" has the mode "100666"/],
    ['a duplicate name', (b) => [{ mode: '100644', name: 'a.txt', oid: writeBlob(b, 'again') }], /"a\.txt" appears twice/],
    ['entries out of order', (b) => [{ mode: '100644', name: '0-first', oid: writeBlob(b, 'x') }], /"0-first" is out of order/, { unsorted: true }],
  ];

  it('refuses each bad entry over smart HTTP, naming the path and what is wrong, and imports nothing', async () => {
    const mirror = await servedMirror();
    const checkout = makeRepo(temp.make('checkout-'), { 'a.txt': 'one\n' });
    const attacks = cases.map(([name, entries, says, opts]) => ({
      name,
      says,
      url: variant(mirror, name.replace(/[^a-z0-9]+/gi, '-'), (b) => intoTurnStart(b, entries, opts)).url,
    }));
    await Promise.all(
      attacks.map(async ({ name, says, url }) => {
        const state = temp.make('state-');
        const attempt = importMirror({ url, stateDir: state, workspaceDir: checkout, env: ENV });
        await expect(attempt, name).rejects.toThrow(ImportError);
        await expect(attempt, name).rejects.toThrow(says);
        await expect(attempt, name).rejects.toThrow(/refused, nothing was imported: in session crafted-session, (its start|turn 1 \(its start\))/);
        expect(leftBehind(state), name).toEqual({ refs: [], packs: [], scratch: [] });
      }),
    );
  }, 90_000);
});

describe('a mirror that names another directory', () => {
  it('is imported into the directory the user gave: serve opens the session there, never over the directory the trailers name', async () => {
    const mirror = await servedMirror();
    const elsewhere = makeRepo(temp.make('victim-'), { 'secret.txt': 'private\n' });
    const { url } = variant(mirror, 'elsewhere', (bare) =>
      rewriteMirror(bare, {
        trailer: (t) => {
          const details = t['details'] as { workingDirectories?: string[] } | undefined;
          if (details?.workingDirectories) details.workingDirectories = [elsewhere];
          for (const root of t['roots'] as { path?: string }[]) root.path = elsewhere;
        },
      }),
    );
    const checkout = makeRepo(temp.make('checkout-'), { 'a.txt': 'one\n', 'src/app.js': 'console.log(1);\n' });
    const state = temp.make('state-b-');
    const imported = await runInProcess(['import', url, '--workspace', checkout, '--state-dir', state, '--json'], { env: ENV });
    expect(imported.stderr).toBe('');
    expect(imported.code).toBe(0);
    expect(JSON.parse(imported.stdout).imported).toEqual([{ sessionId: mirror.sessionId, turns: 1, title: expect.any(String) }]);

    const store = await openWorkspaceStore({ stateDir: state, workspaceDir: checkout });
    try {
      const start = (await store.listSessionCheckpoints(mirror.sessionId)).find((c) => c.reason === 'session start');
      expect((start!.details as { workingDirectories: string[] }).workingDirectories).toEqual([checkout]);
      expect(start?.roots.map((r) => r.path)).toEqual([checkout]);
    } finally {
      await store.close();
    }

    const serve = await startServe([checkout, '--state-dir', state]);
    cleanup.push(() => serve.stop());
    const client = await TestClient.connect(serve.ready.url, { token: serve.ready.token! });
    cleanup.push(() => client.close());
    await client.initialize();
    const session = `ahp-session:/${mirror.sessionId}`;
    const status = await client.request<StatusResult>('harness/status', { channel: session });
    expect(status.sessions[0]!.workingDirectories).toEqual([checkout]);
    const all = await client.request<StatusResult>('harness/status', {});
    expect(all.sessions.flatMap((s) => s.workingDirectories)).not.toContain(elsewhere);
    // Only the user's directory has a store: nothing of the named directory was read or copied.
    expect(shadowDirs(state)).toHaveLength(1);
    expect(readFileSync(join(elsewhere, 'secret.txt'), 'utf8')).toBe('private\n');
  }, 60_000);
});

describe('objects from a mirror are size-checked while they inflate', () => {
  it('refuses 1 GiB of zeros (1 MB packed) from its pack header, inflating none of it (under 1 s of processor time and 300 MB), keeping nothing', async () => {
    const mirror = await servedMirror();
    const compressed = deflatedGib();
    const { url } = variant(mirror, 'gigabyte', (bare) => {
      const blob = packZeros(bare, compressed, GIB, GIB);
      intoTurnStart(bare, () => [{ mode: '100644', name: 'zeros.bin', oid: blob }]);
    });
    const checkout = makeRepo(temp.make('checkout-'), { 'a.txt': 'one\n' });
    const state = temp.make('state-');
    const refused = await measuredImport(['import', url, '--workspace', checkout, '--state-dir', state]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'the mirror holds a file of 1.0 GiB (1073741824 bytes), over the 50.0 MiB (52428800 bytes) limit for one file (--max-file-size)',
    );
    // Inflating the 1 GiB alone takes about 1.6 s of processor time; the refusal about 0.5 s, most of it loading the command.
    expect(refused.cpuMs).toBeLessThan(1000);
    expect(refused.peakRssBytes).toBeLessThan(300 * 1024 * 1024);
    expect(leftBehind(state)).toEqual({ refs: [], packs: [], scratch: [] });
  }, 60_000);

  it('refuses an object that inflates past the size its pack header declares, stopping there', async () => {
    const mirror = await servedMirror();
    // The header says 1 KiB; the stream holds 1 GiB.
    const compressed = deflatedGib();
    const { url } = variant(mirror, 'lying', (bare) => {
      const blob = packZeros(bare, compressed, GIB, 1024);
      intoTurnStart(bare, () => [{ mode: '100644', name: 'small.txt', oid: blob }]);
    });
    const checkout = makeRepo(temp.make('checkout-'), { 'a.txt': 'one\n' });
    const state = temp.make('state-');
    const refused = await measuredImport(['import', url, '--workspace', checkout, '--state-dir', state]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('has an object that inflates to more than the 1024 bytes it declares');
    // Inflating the 1 GiB alone takes about 1.6 s of processor time; the refusal about 0.5 s, most of it loading the command.
    expect(refused.cpuMs).toBeLessThan(1000);
    expect(refused.peakRssBytes).toBeLessThan(300 * 1024 * 1024);
    expect(leftBehind(state)).toEqual({ refs: [], packs: [], scratch: [] });
  }, 60_000);

  it('refuses a file over --max-file-size, and a mirror whose files together pass the budget (--store-budget)', async () => {
    const mirror = await servedMirror();
    const { url } = variant(mirror, 'many', (bare) =>
      intoTurnStart(bare, (b) => [0, 1, 2, 3].map((i) => ({ mode: '100644', name: `part-${i}.bin`, oid: writeBlob(b, Buffer.alloc(400 * 1024, i + 1)) }))),
    );
    const checkout = makeRepo(temp.make('checkout-'), { 'a.txt': 'one\n' });
    // The two refusals do not depend on each other: each goes into a state directory of its own.
    const [state, budgetState] = [temp.make('state-'), temp.make('state-')];
    const tooLarge = await runInProcess(['import', url, '--workspace', checkout, '--state-dir', state, '--max-file-size', '100KiB'], { env: ENV });
    const overBudget = await runInProcess(['import', url, '--workspace', checkout, '--state-dir', budgetState, '--store-budget', '1MiB'], { env: ENV });
    expect(tooLarge.code).toBe(1);
    expect(tooLarge.stderr).toContain('a file of 400.0 KiB (409600 bytes), over the 100.0 KiB (102400 bytes) limit for one file (--max-file-size)');
    expect(overBudget.code).toBe(1);
    expect(overBudget.stderr).toContain('more than 1.0 MiB (1048576 bytes) of files and checkpoints, the most one import takes in (--store-budget)');
    expect(leftBehind(state)).toEqual({ refs: [], packs: [], scratch: [] });
    expect(leftBehind(budgetState)).toEqual({ refs: [], packs: [], scratch: [] });
    // The same mirror within the default limits is imported, into the state directory a refusal left as it was.
    const ok = await runInProcess(['import', url, '--workspace', checkout, '--state-dir', state], { env: ENV });
    expect(ok.code).toBe(0);
  }, 60_000);
});

const GIB = 1024 ** 3;
/** `git hash-object` of 1 GiB of zeros. */
const GIB_OF_ZEROS = '4fce05a4e4ed8cefef2d99f32c519b2fd7841b74';

/**
 * Puts a pack holding one blob of `size` zeros into the remote, its entry
 * header declaring `declared` bytes: run-length deflate makes 1 GiB of zeros
 * about 1 MB. The index is written directly (git's index-pack would inflate
 * the whole blob); the remote's upload-pack then sends the stored entry as it
 * is. Every object's delta search is off, so upload-pack never inflates it.
 */
function packZeros(bare: string, compressed: Buffer, size: number, declared: number): string {
  const header = [];
  let n = declared;
  let byte = (3 << 4) | (n & 0x0f);
  n = Math.floor(n / 16);
  while (n > 0) {
    header.push(byte | 0x80);
    byte = n & 0x7f;
    n = Math.floor(n / 128);
  }
  header.push(byte);
  const entry = Buffer.concat([Buffer.from(header), compressed]);
  const head = Buffer.alloc(12);
  head.write('PACK', 0, 'latin1');
  head.writeUInt32BE(2, 4);
  head.writeUInt32BE(1, 8);
  const body = Buffer.concat([head, entry]);
  const checksum = createHash('sha1').update(body).digest();
  const oid = size === GIB && declared === GIB ? GIB_OF_ZEROS : createHash('sha1').update(`lie ${size} ${declared}`).digest('hex');
  const name = join(bare, 'objects', 'pack', `pack-${checksum.toString('hex')}`);
  mkdirSync(join(bare, 'objects', 'pack'), { recursive: true });
  writeFileSync(`${name}.pack`, Buffer.concat([body, checksum]));
  writeFileSync(`${name}.idx`, writePackIndex([{ oid, offset: 12, crc: zlib.crc32(entry) }], checksum));
  mkdirSync(join(bare, 'info'), { recursive: true });
  writeFileSync(join(bare, 'info', 'attributes'), '* -delta\n');
  return oid;
}

/**
 * 1 GiB of zeros as a zlib stream (about 1 MB) without deflating 1 GiB (a
 * second of processor time): one MiB deflated ending in a full flush, which
 * leaves the compressor as it started, so every further MiB deflates to the
 * same bytes; 1,024 of them, an empty final block, and the Adler-32 of the
 * whole (1 + the sum of the bytes, and the sum of those running sums).
 */
function deflatedGib(): Buffer {
  const mib = zlib.deflateRawSync(Buffer.alloc(1024 * 1024), { level: 9, strategy: zlib.constants.Z_RLE, finishFlush: zlib.constants.Z_FULL_FLUSH });
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE((((GIB % 65521) << 16) | 1) >>> 0);
  // 0x78 0xda: a zlib header for level 9; 0x03 0x00: an empty final block.
  return Buffer.concat([Buffer.from([0x78, 0xda]), ...Array<Buffer>(1024).fill(mib), Buffer.from([0x03, 0x00]), adler]);
}

/**
 * Runs the built CLI in a process that reports the processor time the
 * command used (from the call, so starting Node does not count) and its own
 * peak memory (resident set, the whole process) when it exits. Processor
 * time, not elapsed time: it stands for the work done (inflating and hashing
 * 1 GiB takes seconds of it), and a loaded machine barely changes it.
 */
async function measuredImport(args: string[]): Promise<{ code: number | null; stderr: string; cpuMs: number; peakRssBytes: number }> {
  const main = pathToFileURL(resolve('dist/server/cli/main.js')).href;
  const script = [
    `import { main } from ${JSON.stringify(main)};`,
    'const started = process.cpuUsage();',
    "process.on('exit', () => { const used = process.cpuUsage(started); process.stderr.write(`\\ncommand-cpu-ms ${Math.round((used.user + used.system) / 1000)} peak-rss ${process.resourceUsage().maxRSS * 1024}\\n`); });",
    'try { process.exitCode = (await main(process.argv.slice(1))) ?? 0; } catch (e) { console.error(e.message); process.exitCode = 1; }',
  ].join('\n');
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, '--', ...args], {
    env: { ...process.env, ...ENV },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  const report = /command-cpu-ms (\d+) peak-rss (\d+)/.exec(stderr);
  if (!report) throw new Error(`no report from the command: ${stderr}`);
  return { code, stderr, cpuMs: Number(report[1]), peakRssBytes: Number(report[2]) };
}
