/**
 * `changeset-server import`: brings a mirrored store's sessions into a local
 * workspace's store. The manifest is fetched (one fetch brings every object
 * it reaches) into a private temporary repository under the state directory; each session not already
 * present is copied into the store with its paths moved from the mirrored
 * directory to the local one, and marked ended, so `serve` lists it as a
 * past session, browsable and restorable.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import git from 'isomorphic-git';
import { parseCheckpointMessage } from '../store/checkpoint-format.js';
import { parseCommit } from '../store/commit.js';
import { mkdirPrivate } from '../store/fs-util.js';
import { openWorkspaceStore, type WorkspaceStore } from '../store/index.js';
import { readRef, writeRef } from '../store/refs.js';
import { ShadowStore } from '../store/shadow-store.js';
import { parseTree } from '../store/tree.js';
import { manifestSource, MIRROR_PREFIX, readManifest, refsBySession, type MirroredWorkspace } from './manifest.js';
import { mirrorRemote, type MirrorRemote } from './mirror-remote.js';
import { fetchObject } from './upload-pack.js';
import { relocateJson, relocateMessage, serializeCommitLike, type Relocation } from './relocate.js';

/** Options of {@link importMirror}. */
export interface ImportOptions {
  /** The mirror's URL. */
  url: string;
  /** State directory whose store receives the sessions. */
  stateDir: string;
  /** The local checkout of the mirrored project. */
  workspaceDir: string;
  /** Which mirrored store, when the remote holds several: its full name, its directory name or its id. */
  from?: string;
  /** Token and authentication settings (see `mirrorRemote`). */
  env?: NodeJS.ProcessEnv;
}

/** What an import did. */
export interface ImportResult {
  /** The mirrored store it read (`<name>-<id>`). */
  source: string;
  /** The workspace as the mirror recorded it. */
  mirrored: MirroredWorkspace;
  /** The local workspace directory the sessions now belong to. */
  workspaceDir: string;
  /** Sessions copied, with their number of turns. */
  imported: { sessionId: string; turns: number }[];
  /** Sessions the store already had (left as they were). */
  skipped: string[];
}

/** The remote or its contents do not allow an import (exit code 1, with this message). */
export class ImportError extends Error {}

export async function importMirror(options: ImportOptions): Promise<ImportResult> {
  const remote = mirrorRemote(options.url, options.env);
  const source = await chooseSource(remote, options.workspaceDir, options.from);
  await mkdirPrivate(options.stateDir);
  const scratch = await mkdtemp(join(options.stateDir, 'mirror-import-'));
  try {
    const fetched = source.manifest;
    await fetchObject(remote, scratch, fetched);
    const reader = await ShadowStore.open({ shadowDir: scratch, workspaceObjectDirs: [] });
    try {
      const manifest = await readManifest(fetched, (oid) => reader.readObject(oid));
      const store = await openWorkspaceStore({ stateDir: options.stateDir, workspaceDir: options.workspaceDir });
      try {
        const copier = new SessionCopier(reader, store, { from: manifest.workspace.path, to: store.workspaceDir });
        const result: ImportResult = { source: source.name, mirrored: manifest.workspace, workspaceDir: store.workspaceDir, imported: [], skipped: [] };
        for (const [prefix, refs] of refsBySession(manifest.refs)) {
          const copied = await copier.copySession(prefix, refs);
          if (copied.imported) result.imported.push({ sessionId: copied.sessionId, turns: copied.turns });
          else result.skipped.push(copied.sessionId);
        }
        return result;
      } finally {
        await store.close();
      }
    } finally {
      await reader.close();
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Picks the mirrored store to import; resolves with its name and its manifest commit. */
async function chooseSource(remote: MirrorRemote, workspaceDir: string, from: string | undefined): Promise<{ name: string; manifest: string }> {
  const refs = await git.listServerRefs({ http: remote.http, url: remote.url, prefix: MIRROR_PREFIX, protocolVersion: 1, onAuth: remote.onAuth, onAuthFailure: remote.onAuthFailure });
  const manifests = new Map(refs.flatMap((r) => {
    const name = manifestSource(r.ref);
    return name === undefined ? [] : [[name, r.oid] as const];
  }));
  const sources = [...manifests.keys()];
  if (sources.length === 0) throw new ImportError(`${remote.url} holds no mirrored sessions (no ${MIRROR_PREFIX}*/manifest ref)`);
  const nameOf = (s: string) => s.replace(/-[0-9a-f]{16}$/, '');
  const idOf = (s: string) => s.slice(-16);
  let candidates: string[];
  if (from !== undefined) {
    candidates = sources.filter((s) => s === from || nameOf(s) === from || idOf(s) === from);
    if (candidates.length === 0) throw new ImportError(`${remote.url} has no mirrored workspace "${from}"; it has: ${sources.join(', ')}`);
  } else if (sources.length === 1) {
    candidates = sources;
  } else {
    const local = basename(workspaceDir).toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '');
    candidates = sources.filter((s) => nameOf(s) === local);
    if (candidates.length === 0) throw new ImportError(`${remote.url} mirrors several workspaces; name one with --from: ${sources.join(', ')}`);
  }
  if (candidates.length > 1) throw new ImportError(`several mirrored workspaces match; name one with --from: ${candidates.join(', ')}`);
  return { name: candidates[0]!, manifest: manifests.get(candidates[0]!)! };
}

/** Copies sessions from the fetched objects into a store, moving their paths. */
class SessionCopier {
  private readonly commits = new Map<string, string>();
  private readonly blobs = new Map<string, string>();
  private readonly move: Relocation | undefined;

  constructor(
    private readonly reader: ShadowStore,
    private readonly store: WorkspaceStore,
    move: Relocation,
  ) {
    this.move = move.from === move.to ? undefined : move;
  }

  async copySession(prefix: string, refs: ReadonlyMap<string, string>): Promise<{ sessionId: string; imported: boolean; turns: number }> {
    const headName = `${prefix}head`;
    const head = refs.get(headName);
    if (!head) throw new ImportError(`the mirror lists ${prefix} without its head`);
    const trailer = parseCheckpointMessage(parseCommit((await this.reader.readObject(head)).content, head).message, head);
    const sessionId = trailer.sessionId;
    if (await readRef(this.store.layout.shadowDir, headName)) return { sessionId, imported: false, turns: 0 };
    const local = new Map<string, string>();
    for (const [name, oid] of refs) {
      const type = (await this.reader.readObject(oid)).type;
      local.set(name, type === 'commit' ? await this.copyChain(oid) : await this.copyBlob(oid, name.endsWith('/entries')));
    }
    await this.store.flush();
    // Ended first: a session found without its marker would be resumed and recorded into.
    if (!refs.has(`${prefix}ended`)) await this.store.markSessionEnded(sessionId, trailer.createdAt);
    for (const [name, oid] of local) if (name !== headName) await writeRef(this.store.layout.shadowDir, name, oid);
    await writeRef(this.store.layout.shadowDir, headName, local.get(headName)!);
    const turns = [...refs.keys()].filter((n) => /\/turns\/[^/]+\/start$/.test(n)).length;
    return { sessionId, imported: true, turns };
  }

  /** Copies a checkpoint and its ancestors (oldest first, iteratively: chains are long), returning its local id. */
  private async copyChain(tip: string): Promise<string> {
    const todo: string[] = [];
    for (let oid: string | undefined = tip; oid !== undefined && !this.commits.has(oid); ) {
      todo.push(oid);
      oid = parseCommit((await this.reader.readObject(oid)).content, oid).parents[0];
    }
    for (const oid of todo.reverse()) {
      const commit = parseCommit((await this.reader.readObject(oid)).content, oid);
      await this.copyTree(commit.tree);
      let message = commit.message;
      if (this.move) {
        const entries = (parseCheckpointMessage(commit.message, oid) as { entries?: unknown }).entries;
        if (typeof entries === 'string') await this.copyBlob(entries, true);
        message = relocateMessage(commit.message, this.move, this.blobs);
      }
      const parents = commit.parents.map((p) => this.commits.get(p) ?? p);
      this.commits.set(oid, await this.store.writeObject('commit', serializeCommitLike(commit, parents, message)));
    }
    return this.commits.get(tip)!;
  }

  /** Copies a tree and what it holds, skipping whatever the store (or the local repository) already has. */
  private async copyTree(oid: string): Promise<void> {
    if (await this.store.hasObject(oid)) return;
    const tree = await this.reader.readObject(oid);
    for (const entry of parseTree(tree.content, oid)) {
      if (entry.kind === 'tree') await this.copyTree(entry.oid);
      else if (entry.kind === 'blob' && !(await this.store.hasObject(entry.oid))) {
        await this.store.writeObject('blob', (await this.reader.readObject(entry.oid)).content);
      }
    }
    await this.store.writeObject('tree', tree.content);
  }

  /** Copies a blob a ref names; change entries get their paths moved. */
  private async copyBlob(oid: string, entries: boolean): Promise<string> {
    const known = this.blobs.get(oid);
    if (known) return known;
    let content = (await this.reader.readObject(oid)).content;
    if (entries && this.move) content = Buffer.from(`${JSON.stringify(relocateJson(JSON.parse(Buffer.from(content).toString('utf8')), this.move))}\n`);
    const copied = await this.store.writeObject('blob', content);
    this.blobs.set(oid, copied);
    return copied;
  }
}
