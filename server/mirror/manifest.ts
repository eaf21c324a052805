/**
 * What the mirror writes on the remote, all under
 * `refs/changeset-server/mirror/<source>/`, where `<source>` names the
 * mirrored store (`<directory name>-<workspace id>`):
 *
 * - `sessions/<session>/head`: each session's latest checkpoint, so the next
 *   push of that session sends only what is new;
 * - `manifest`: a commit whose tree holds `workspace.json` (the directory the
 *   store records), `refs` (every checkpoint ref of the store, as
 *   `<oid> <name>` lines) and `objects/` (the blobs those refs name: change
 *   entries, end markers), and whose parents are the previous manifest and
 *   every session's head — so one fetch of it brings everything back.
 */
import { basename } from 'node:path';
import { SESSIONS_PREFIX } from '../store/checkpoint-format.js';
import { parseCommit, serializeCommit } from '../store/commit.js';
import { hashObject, isOid } from '../store/object-format.js';
import { parseTree, serializeTree, type NewTreeEntry } from '../store/tree.js';
import type { StoredObject } from '../store/types.js';

/** Every ref the mirror writes on a remote starts with this. */
export const MIRROR_PREFIX = 'refs/changeset-server/mirror/';

/** What the manifest records about the mirrored store's workspace. */
export interface MirroredWorkspace {
  version: 1;
  /** Real path of the workspace directory on the machine that mirrored it. */
  path: string;
  /** Its directory name. */
  name: string;
}

/** The ref-name component naming a mirrored store: a readable directory name and the store's id. */
export function sourceName(workspaceDir: string, workspaceId: string): string {
  const readable = basename(workspaceDir)
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return `${readable || 'workspace'}-${workspaceId}`;
}

/** Remote ref names of one mirrored store. */
export function mirrorRefs(source: string) {
  const base = `${MIRROR_PREFIX}${source}/`;
  return {
    base,
    manifest: `${base}manifest`,
    /** The remote name of a session's `head` ref, from the local one. */
    sessionHead: (localHead: string) => `${base}${localHead.slice('refs/changeset-server/'.length)}`,
  };
}

/** Parses `refs/changeset-server/mirror/<source>/manifest` into its source, or undefined. */
export function manifestSource(ref: string): string | undefined {
  const match = /^refs\/changeset-server\/mirror\/([^/]+)\/manifest$/.exec(ref);
  return match?.[1];
}

/** The checkpoint refs of a store grouped by session: ref prefix → its refs. */
export function refsBySession(refs: ReadonlyMap<string, string>): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  for (const [name, oid] of refs) {
    if (!name.startsWith(SESSIONS_PREFIX)) continue;
    const slash = name.indexOf('/', SESSIONS_PREFIX.length);
    if (slash < 0) continue;
    const prefix = name.slice(0, slash + 1);
    let group = out.get(prefix);
    if (!group) out.set(prefix, (group = new Map()));
    group.set(name, oid);
  }
  return out;
}

/** `<oid> <name>` lines sorted by name, as git's packed-refs lists them. */
export function formatRefList(refs: ReadonlyMap<string, string>): string {
  return [...refs]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, oid]) => `${oid} ${name}\n`)
    .join('');
}

/** Reads what {@link formatRefList} wrote; lines that are not a ref under `sessions/` are ignored. */
function parseRefList(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const space = line.indexOf(' ');
    const oid = line.slice(0, space);
    const name = line.slice(space + 1);
    if (space === 40 && isOid(oid) && name.startsWith(SESSIONS_PREFIX) && !name.includes('..')) out.set(name, oid);
  }
  return out;
}

/** Input of {@link buildManifest}. */
export interface ManifestInput {
  workspace: MirroredWorkspace;
  /** Every checkpoint ref of the store. */
  refs: ReadonlyMap<string, string>;
  /** Ref values that are blobs (the rest are checkpoint commits). */
  blobs: ReadonlySet<string>;
  /** The manifest the remote has now, if any. */
  previous?: string;
  now?: Date;
}

/** A manifest commit and the objects it adds, which exist only for the push. */
export interface BuiltManifest {
  commit: string;
  objects: Map<string, StoredObject>;
}

/** Makes the manifest commit of a store's refs. */
export function buildManifest(input: ManifestInput): BuiltManifest {
  const objects = new Map<string, StoredObject>();
  const add = (type: 'blob' | 'tree' | 'commit', content: Uint8Array): string => {
    const oid = hashObject(type, content);
    objects.set(oid, { type, content });
    return oid;
  };
  const blobEntries: NewTreeEntry[] = [...new Set([...input.refs.values()].filter((oid) => input.blobs.has(oid)))]
    .sort()
    .map((oid) => ({ mode: '100644', name: oid, oid }));
  const tree = add(
    'tree',
    serializeTree([
      { mode: '040000', name: 'objects', oid: add('tree', serializeTree(blobEntries)) },
      { mode: '100644', name: 'refs', oid: add('blob', Buffer.from(formatRefList(input.refs))) },
      { mode: '100644', name: 'workspace.json', oid: add('blob', Buffer.from(`${JSON.stringify(input.workspace)}\n`)) },
    ]),
  );
  const parents = input.previous ? [input.previous] : [];
  for (const [prefix, refs] of refsBySession(input.refs)) {
    const head = refs.get(`${prefix}head`);
    const tips = head ? [head] : [...refs.values()].filter((oid) => !input.blobs.has(oid));
    for (const tip of tips) if (!parents.includes(tip)) parents.push(tip);
  }
  const commit = add('commit', serializeCommit(tree, parents, `changeset-server mirror of ${input.workspace.name}\n`, input.now ?? new Date()));
  return { commit, objects };
}

/** What a fetched manifest says. */
export interface ManifestContent {
  workspace: MirroredWorkspace;
  refs: Map<string, string>;
}

/** Reads a manifest commit through `read`. */
export async function readManifest(commit: string, read: (oid: string) => Promise<StoredObject>): Promise<ManifestContent> {
  const tree = parseTree((await read(parseCommit((await read(commit)).content, commit).tree)).content);
  const file = async (name: string): Promise<string> => {
    const entry = tree.find((e) => e.name === name);
    if (!entry) throw new Error(`the mirror's manifest ${commit} has no ${name}`);
    return Buffer.from((await read(entry.oid)).content).toString('utf8');
  };
  const workspace = JSON.parse(await file('workspace.json')) as Partial<MirroredWorkspace>;
  if (workspace.version !== 1 || typeof workspace.path !== 'string' || typeof workspace.name !== 'string') {
    throw new Error(`the mirror's manifest ${commit} names no workspace this version understands`);
  }
  return { workspace: { version: 1, path: workspace.path, name: workspace.name }, refs: parseRefList(await file('refs')) };
}
