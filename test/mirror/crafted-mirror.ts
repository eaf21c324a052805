/**
 * Hostile mirrors for tests, made the way an attacker would: a real session
 * is mirrored to a bare repository (the store's own writer and pusher), then
 * the remote is rewritten with git plumbing — trees written raw with
 * `git hash-object -t tree --literally` (so names and orders `git mktree`
 * refuses get in), checkpoint commits re-hashed with their trailers edited,
 * the manifest and session refs moved to the rewritten chain.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { mirrorRemote } from '../../server/mirror/mirror-remote.js';
import { WorkspaceMirror } from '../../server/mirror/workspace-mirror.js';
import { openWorkspaceStore, type WorkspaceStore } from '../../server/store/index.js';
import { serializeTree, type NewTreeEntry } from '../../server/store/tree.js';

/** One raw tree entry: any mode text, any name bytes. */
export interface RawEntry {
  mode: string;
  name: string | Buffer;
  oid: string;
}

/** Files of a recorded state: path → content (`{ link: target }` for a symbolic link). */
export type Files = Record<string, string | Buffer | { link: string }>;

function gitBare(bare: string, args: readonly string[], input?: Buffer | string): string {
  return execFileSync('git', ['--git-dir', bare, ...args], {
    input,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
  })
    .toString('latin1')
    .trim();
}

/**
 * Writes an object into the bare repository as a loose object, as
 * `git hash-object -t <type> --literally -w --stdin` does (the same file,
 * `objects/<2>/<38>`, holding the deflated `<type> <size>\0<content>`),
 * without starting git: a test crafts hundreds of them.
 */
function writeObject(bare: string, type: 'blob' | 'tree' | 'commit', content: Buffer): string {
  const raw = Buffer.concat([Buffer.from(`${type} ${content.byteLength}\0`, 'latin1'), content]);
  const oid = createHash('sha1').update(raw).digest('hex');
  const file = join(bare, 'objects', oid.slice(0, 2), oid.slice(2));
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, deflateSync(raw), { mode: 0o444 });
  }
  return oid;
}

/** Writes a blob into the bare repository. */
export function writeBlob(bare: string, content: string | Buffer): string {
  return writeObject(bare, 'blob', Buffer.from(content));
}

/** Writes a tree exactly as given: no sorting, no checks (what `git mktree` would refuse gets in). */
export function writeRawTree(bare: string, entries: readonly RawEntry[]): string {
  const content = Buffer.concat(
    entries.flatMap((e) => [Buffer.from(`${e.mode} `, 'latin1'), Buffer.from(e.name), Buffer.from([0]), Buffer.from(e.oid, 'hex')]),
  );
  return writeObject(bare, 'tree', content);
}

/**
 * Objects read with `git cat-file <type> <oid>`, by id: an object's id is the
 * hash of its content, so what one repository holds under an id is what any
 * other does, and the copies of one mirror a test rewrites are read once.
 */
const readObjects = new Map<string, Buffer>();

function readObject(bare: string, type: 'blob' | 'tree' | 'commit', oid: string): Buffer {
  const key = `${type} ${oid}`;
  let content = readObjects.get(key);
  if (!content) {
    content = execFileSync('git', ['--git-dir', bare, 'cat-file', type, oid], { maxBuffer: 64 * 1024 * 1024 });
    readObjects.set(key, content);
  }
  return content;
}

/** The commits reachable from `oid`, oldest first (`git rev-list --reverse`), by id as {@link readObjects}. */
const commitLists = new Map<string, string[]>();

function commitsUpTo(bare: string, oid: string): string[] {
  let list = commitLists.get(oid);
  if (!list) {
    list = gitBare(bare, ['rev-list', '--reverse', oid]).split('\n');
    commitLists.set(oid, list);
  }
  return list;
}

/** A tree's raw entries. */
export function readRawTree(bare: string, oid: string): RawEntry[] {
  const buf = readObject(bare, 'tree', oid);
  const out: RawEntry[] = [];
  for (let i = 0; i < buf.length; ) {
    const space = buf.indexOf(0x20, i);
    const nul = buf.indexOf(0, space);
    out.push({ mode: buf.toString('latin1', i, space), name: buf.subarray(space + 1, nul), oid: buf.toString('hex', nul + 1, nul + 21) });
    i = nul + 21;
  }
  return out;
}

/** Points a ref of the bare repository at `oid`, as `git update-ref` does there (a loose ref, which wins over a packed one). */
function setRef(bare: string, ref: string, oid: string): void {
  mkdirSync(dirname(join(bare, ref)), { recursive: true });
  writeFileSync(join(bare, ref), `${oid}\n`);
}

/** A tree with `extra` entries added to `base`'s, in git's order unless `unsorted`. */
export function treeWith(bare: string, base: string, extra: readonly RawEntry[], opts: { unsorted?: boolean } = {}): string {
  const entries = [...readRawTree(bare, base), ...extra];
  if (!opts.unsorted) entries.sort((a, b) => gitOrder(a, b));
  return writeRawTree(bare, entries);
}

function gitOrder(a: RawEntry, b: RawEntry): number {
  const key = (e: RawEntry) => Buffer.concat([Buffer.from(e.name), Buffer.from(e.mode === '40000' ? '/' : '')]);
  return Buffer.compare(key(a), key(b));
}

/** What {@link mirrorSession} recorded. */
export interface MirroredSession {
  sessionId: string;
  /** The mirrored store's name on the remote (`<name>-<id>`). */
  source: string;
}

/**
 * Records a session of one turn (`before` → `after`) in a fresh store for
 * `workspaceDir`, as the recorder writes one (session start, turn start,
 * turn end with its change list), and mirrors it to `url`.
 */
export async function mirrorSession(
  url: string,
  env: NodeJS.ProcessEnv,
  opts: { stateDir: string; workspaceDir: string; sessionId: string; before: Files; after: Files },
): Promise<MirroredSession> {
  const store = await openWorkspaceStore({ stateDir: opts.stateDir, workspaceDir: opts.workspaceDir });
  try {
    const before = await writeFiles(store, opts.before);
    const after = await writeFiles(store, opts.after);
    const dir = store.workspaceDir;
    const now = new Date().toISOString();
    const roots = (tree: string) => ({ roots: [{ name: 'workspace', path: dir, tree }], layout: 'single' as const });
    await store.writeCheckpoint({
      sessionId: opts.sessionId,
      kind: 'safety',
      reason: 'session start',
      details: { title: 'crafted', createdAt: now, workingDirectories: [dir] },
      ...roots(before),
    });
    await store.writeCheckpoint({
      sessionId: opts.sessionId,
      kind: 'start',
      turnId: 't1',
      turn: { message: 'first prompt', startedAt: now },
      ...roots(before),
    });
    await store.writeCheckpoint({
      sessionId: opts.sessionId,
      kind: 'end',
      turnId: 't1',
      turn: { message: 'first prompt', state: 'complete', startedAt: now, endedAt: now, tools: [] },
      entries: { entries: [], tools: [], captures: [] },
      ...roots(after),
    });
    const mirror = new WorkspaceMirror(store, mirrorRemote(url, env));
    await mirror.syncNow();
    const status = await mirror.status();
    if (status.lastError) throw new Error(`mirroring failed: ${JSON.stringify(status.lastError)}`);
    return { sessionId: opts.sessionId, source: mirror.source };
  } finally {
    await store.close();
  }
}

async function writeFiles(store: WorkspaceStore, files: Files): Promise<string> {
  type Dir = Map<string, Dir | NewTreeEntry>;
  const top: Dir = new Map();
  for (const [path, content] of Object.entries(files)) {
    const parts = path.split('/');
    let dir = top;
    for (const part of parts.slice(0, -1)) {
      let next = dir.get(part);
      if (!(next instanceof Map)) dir.set(part, (next = new Map()));
      dir = next;
    }
    const name = parts[parts.length - 1]!;
    const link = typeof content === 'object' && !Buffer.isBuffer(content) ? content.link : undefined;
    const oid = await store.writeObject('blob', Buffer.from(link ?? (content as string | Buffer)));
    dir.set(name, { mode: link !== undefined ? '120000' : '100644', name, oid });
  }
  const write = async (dir: Dir): Promise<string> => {
    const entries: NewTreeEntry[] = [];
    for (const [name, value] of dir) entries.push(value instanceof Map ? { mode: '040000', name, oid: await write(value) } : value);
    return store.writeObject('tree', serializeTree(entries));
  };
  const tree = await write(top);
  await store.flush();
  return tree;
}

/** How {@link rewriteMirror} changes each checkpoint of the mirrored sessions. */
export interface Rewrite {
  /** The checkpoint's new tree, given its tree and its trailer (undefined: keep it). */
  tree?: (tree: string, trailer: Record<string, unknown>) => string | undefined;
  /** The checkpoint's new trailer (edit it in place). */
  trailer?: (trailer: Record<string, unknown>) => void;
}

/**
 * Rewrites every checkpoint of every session the remote's manifest lists,
 * re-hashing the chain, and points the manifest (a new commit with the new
 * `refs` list) and the session heads at the rewritten checkpoints.
 */
export function rewriteMirror(bare: string, rewrite: Rewrite): void {
  const manifestRef = gitBare(bare, ['for-each-ref', '--format=%(refname)', 'refs/changeset-server/mirror/*/manifest']).split('\n')[0]!;
  const manifest = gitBare(bare, ['rev-parse', manifestRef]);
  const raw = readObject(bare, 'commit', manifest).toString('utf8');
  const [head, ...message] = raw.split('\n\n');
  const manifestTree = readRawTree(bare, /^tree ([0-9a-f]{40})$/m.exec(head!)![1]!);
  const refsText = readObject(bare, 'blob', manifestTree.find((e) => Buffer.from(e.name).toString() === 'refs')!.oid)
    .toString('latin1')
    .trim();
  const moved = new Map<string, string>();
  for (const line of refsText.split('\n')) {
    const [oid, name] = line.split(' ');
    if (!name?.endsWith('/head')) continue;
    for (const commit of commitsUpTo(bare, oid!)) moved.set(commit, rewriteCommit(bare, commit, moved, rewrite));
  }
  const mapped = (oid: string) => moved.get(oid) ?? oid;
  const newRefs = refsText.split('\n').map((l) => {
    const [oid, name] = l.split(' ');
    return `${mapped(oid!)} ${name}`;
  });
  const refsBlob = writeBlob(bare, `${newRefs.join('\n')}\n`);
  const tree = manifestTree.map((e) => (Buffer.from(e.name).toString() === 'refs' ? { ...e, oid: refsBlob } : e));
  const lines = head!
    .split('\n')
    .map((l) => (l.startsWith('tree ') ? `tree ${writeRawTree(bare, tree)}` : l.startsWith('parent ') ? `parent ${mapped(l.slice(7))}` : l));
  const newManifest = writeObject(bare, 'commit', Buffer.from(`${lines.join('\n')}\n\n${message.join('\n\n')}`));
  setRef(bare, manifestRef, newManifest);
  const base = manifestRef.slice(0, -'manifest'.length);
  for (const line of newRefs) {
    const [oid, name] = line.split(' ');
    if (name?.endsWith('/head')) setRef(bare, `${base}${name.slice('refs/changeset-server/'.length)}`, oid!);
  }
}

function rewriteCommit(bare: string, oid: string, moved: ReadonlyMap<string, string>, rewrite: Rewrite): string {
  const raw = readObject(bare, 'commit', oid).toString('utf8');
  const split = raw.indexOf('\n\n');
  const headers = raw.slice(0, split).split('\n');
  const messageLines = raw.slice(split + 2).split('\n');
  const at = messageLines.findIndex((l) => l.startsWith('Changeset-Server: '));
  const trailer = JSON.parse(messageLines[at]!.slice('Changeset-Server: '.length)) as Record<string, unknown>;
  const tree = headers.find((l) => l.startsWith('tree '))!.slice(5);
  const newTree = rewrite.tree?.(tree, trailer) ?? tree;
  rewrite.trailer?.(trailer);
  messageLines[at] = `Changeset-Server: ${JSON.stringify(trailer)}`;
  const newHeaders = headers.map((l) =>
    l.startsWith('tree ') ? `tree ${newTree}` : l.startsWith('parent ') ? `parent ${moved.get(l.slice(7)) ?? l.slice(7)}` : l,
  );
  return writeObject(bare, 'commit', Buffer.from(`${newHeaders.join('\n')}\n\n${messageLines.join('\n')}`));
}
