/**
 * `changeset-server import`: brings a mirrored store's sessions into a local
 * workspace's store. The manifest is fetched (one fetch brings every object
 * it reaches) into a private temporary repository under the state
 * directory, within size limits checked as it inflates (`pack-intake.ts`);
 * everything to copy is checked before anything is (`import-check.ts`);
 * then each session not already present is copied into the store with its
 * paths moved from the mirrored directory to the local one, its working
 * directory set to the local one whatever the mirror says, marked imported
 * and ended, so `serve` lists it as a past session, browsable and
 * restorable.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import git from 'isomorphic-git';
import { parseCheckpointMessage } from '../store/checkpoint-format.js';
import { parseCommit } from '../store/commit.js';
import { mkdirPrivate } from '../private-files.js';
import { writeImportedMarker } from '../store/imported-marker.js';
import { openWorkspaceStore, type WorkspaceStore } from '../store/index.js';
import { readRef, writeRef } from '../store/refs.js';
import { ShadowStore } from '../store/shadow-store.js';
import { parseTree } from '../store/tree.js';
import { checkMirroredSessions, type CheckedSession } from './import-check.js';
import { DEFAULT_IMPORT_LIMITS, ImportError, refusedImport, type ImportLimits } from './import-limits.js';
import { manifestSource, MIRROR_PREFIX, readManifest, refsBySession, type MirroredWorkspace } from './manifest.js';
import { mirrorRemote, type MirrorRemote } from './mirror-remote.js';
import { fetchObject } from './upload-pack.js';
import { localizeMessage, relocateJson, serializeCommitLike, type Relocation } from './relocate.js';

export { ImportError } from './import-limits.js';
export type { ImportLimits } from './import-limits.js';

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
  /** How much the import takes in; {@link DEFAULT_IMPORT_LIMITS} by default. */
  limits?: ImportLimits;
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
  /** Sessions not imported, with why (e.g. recorded over several directories). */
  leftOut: { sessionId: string; reason: string }[];
}

export async function importMirror(options: ImportOptions): Promise<ImportResult> {
  const limits = options.limits ?? DEFAULT_IMPORT_LIMITS;
  const remote = mirrorRemote(options.url, options.env);
  const source = await chooseSource(remote, options.workspaceDir, options.from);
  await mkdirPrivate(options.stateDir);
  const scratch = await mkdtemp(join(options.stateDir, 'mirror-import-'));
  try {
    const fetched = source.manifest;
    const packed = await fetchObject(remote, scratch, fetched, limits);
    const reader = await ShadowStore.open({ shadowDir: scratch, workspaceObjectDirs: [] });
    try {
      const read = (oid: string) => {
        if (!packed.has(oid)) throw refusedImport(`the mirror's manifest names an object (${oid}) it did not send`);
        return reader.readObject(oid);
      };
      const manifest = await readManifest(fetched, read);
      const store = await openWorkspaceStore({ stateDir: options.stateDir, workspaceDir: options.workspaceDir });
      try {
        const checked = await checkMirroredSessions(
          refsBySession(manifest.refs),
          { packed, read },
          { mirrored: manifest.workspace.path, local: store.workspaceDir },
          async (head) => (await readRef(store.layout.shadowDir, head)) !== undefined,
        );
        const copier = new SessionCopier(reader, store, { from: manifest.workspace.path, to: store.workspaceDir });
        const result: ImportResult = {
          source: source.name,
          mirrored: manifest.workspace,
          workspaceDir: store.workspaceDir,
          imported: [],
          skipped: checked.present,
          leftOut: checked.leftOut,
        };
        const importedAt = new Date().toISOString();
        for (const session of checked.sessions) {
          await copier.copySession(session, { url: remote.url, source: source.name, importedAt });
          result.imported.push({ sessionId: session.sessionId, turns: session.turns });
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
  const refs = await git.listServerRefs({
    http: remote.http,
    url: remote.transportUrl,
    prefix: MIRROR_PREFIX,
    protocolVersion: 1,
    onAuth: remote.onAuth,
    onAuthFailure: remote.onAuthFailure,
  });
  const manifests = new Map(
    refs.flatMap((r) => {
      const name = manifestSource(r.ref);
      return name === undefined ? [] : [[name, r.oid] as const];
    }),
  );
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
    const local = basename(workspaceDir)
      .toLowerCase()
      .replace(/[^a-z0-9_-]+/g, '-')
      .replace(/^-+|-+$/g, '');
    candidates = sources.filter((s) => nameOf(s) === local);
    if (candidates.length === 0) throw new ImportError(`${remote.url} mirrors several workspaces; name one with --from: ${sources.join(', ')}`);
  }
  if (candidates.length > 1) throw new ImportError(`several mirrored workspaces match; name one with --from: ${candidates.join(', ')}`);
  return { name: candidates[0]!, manifest: manifests.get(candidates[0]!)! };
}

/** Copies checked sessions from the fetched objects into a store, moving their paths. */
class SessionCopier {
  private readonly commits = new Map<string, string>();
  private readonly blobs = new Map<string, string>();

  constructor(
    private readonly reader: ShadowStore,
    private readonly store: WorkspaceStore,
    private readonly move: Relocation,
  ) {}

  async copySession(session: CheckedSession, origin: { url: string; source: string; importedAt: string }): Promise<void> {
    const headName = `${session.prefix}head`;
    const local = new Map<string, string>();
    for (const [name, oid] of session.refs) {
      const type = (await this.reader.readObject(oid)).type;
      local.set(name, type === 'commit' ? await this.copyChain(oid) : await this.copyBlob(oid, name.endsWith('/entries')));
    }
    await this.store.flush();
    // Marked before any checkpoint ref: a session found without its marks would be taken for a local one, or resumed and recorded into.
    await writeImportedMarker(this.store, session.sessionId, origin);
    await this.store.markSessionEnded(session.sessionId, session.endedAt);
    for (const [name, oid] of local) if (name !== headName) await writeRef(this.store.layout.shadowDir, name, oid);
    await writeRef(this.store.layout.shadowDir, headName, local.get(headName)!);
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
      const entries = (parseCheckpointMessage(commit.message, oid) as { entries?: unknown }).entries;
      if (typeof entries === 'string') await this.copyBlob(entries, true);
      const message = localizeMessage(commit.message, this.move, this.blobs);
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
    if (entries && this.move.from !== this.move.to)
      content = Buffer.from(`${JSON.stringify(relocateJson(JSON.parse(Buffer.from(content).toString('utf8')), this.move))}\n`);
    const copied = await this.store.writeObject('blob', content);
    this.blobs.set(oid, copied);
    return copied;
  }
}
