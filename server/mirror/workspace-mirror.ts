/**
 * Mirrors one workspace store's checkpoints to a git remote, in the
 * background: a sync pushes each session whose head moved, then the
 * manifest; a failed sync is retried with exponential backoff. Nothing here
 * is awaited by a turn.
 */
import { basename } from 'node:path';
import git from 'isomorphic-git';
import type { PendingSession, WorkspaceMirrorStatus } from '../../protocol/index.js';
import { SESSIONS_PREFIX } from '../store/checkpoint-format.js';
import { decodeRefComponent } from '../store/ref-names.js';
import { listRefs } from '../store/refs.js';
import type { WorkspaceStore } from '../store/index.js';
import { buildManifest, formatRefList, mirrorRefs, refsBySession, sourceName } from './manifest.js';
import { describeRemoteError, type MirrorRemote } from './mirror-remote.js';
import { storeGitFs, VIRTUAL_GITDIR, type ObjectOverlay } from './store-git-fs.js';

/** Timing of syncs and retries. */
export interface MirrorTiming {
  /** Wait after a trigger, so the refs of one turn or operation go in one sync (default 250 ms). */
  debounceMs?: number;
  /** First retry delay after a failure (default 1 s); doubles per failure. */
  retryBaseMs?: number;
  /** Longest retry delay (default 5 minutes). */
  retryMaxMs?: number;
}

export class WorkspaceMirror {
  readonly source: string;
  private readonly refs: ReturnType<typeof mirrorRefs>;
  /** The store's refs as the remote last confirmed them. */
  private pushed: Map<string, string> | undefined;
  /** What each ref value is, so the manifest knows which need a tree entry to be reachable. */
  private readonly kinds = new Map<string, string>();
  private running: Promise<void> | undefined;
  private dirty = false;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private lastSuccessAt: string | undefined;
  private lastError: string | undefined;
  private lastErrorAt: string | undefined;
  private nextRetryAt: number | undefined;
  private stopped = false;
  private readonly abort = new AbortController();
  private readonly debounceMs: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;

  constructor(
    private readonly store: WorkspaceStore,
    private readonly remote: MirrorRemote,
    timing: MirrorTiming = {},
    private readonly log: (line: string) => void = () => undefined,
  ) {
    this.source = sourceName(store.workspaceDir, basename(store.layout.root));
    this.refs = mirrorRefs(this.source);
    this.debounceMs = timing.debounceMs ?? 250;
    this.retryBaseMs = timing.retryBaseMs ?? 1000;
    this.retryMaxMs = timing.retryMaxMs ?? 5 * 60 * 1000;
  }

  /** Asks for a sync soon. While retrying after a failure, the retry already scheduled picks the change up. */
  schedule(): void {
    if (this.stopped) return;
    this.dirty = true;
    if (this.running || this.timer) return;
    this.timer = setTimeout(() => this.start(), this.debounceMs);
    this.timer.unref();
  }

  /** Asks for a sync when the store's refs differ from what the remote last confirmed (cheap: reads refs only). */
  async scheduleIfChanged(): Promise<void> {
    if (this.stopped || this.running || this.timer) return;
    const local = await listRefs(this.store.layout.shadowDir, SESSIONS_PREFIX).catch(() => undefined);
    if (local && (this.pushed === undefined || formatRefList(local) !== formatRefList(this.pushed))) this.schedule();
  }

  /** Syncs now (unless one is running) and resolves when the store's refs are on the remote or a sync failed. */
  async syncNow(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.dirty = true;
    while (this.dirty && !this.stopped) {
      if (this.running) await this.running;
      else await this.start();
      if (this.lastErrorAt !== undefined && this.nextRetryAt !== undefined) return;
    }
  }

  /** Stops: waits up to `graceMs` for a running sync (a last one is started if refs are pending), then abandons it. */
  async stop(graceMs = 3000): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const last = this.running ?? (this.dirty || this.pushed === undefined ? this.start() : undefined);
    this.stopped = true;
    if (last) {
      let timeout: NodeJS.Timeout | undefined;
      const expired = new Promise<void>((resolve) => (timeout = setTimeout(resolve, graceMs)));
      await Promise.race([last, expired]);
      clearTimeout(timeout);
    }
    // Not awaited further: a remote that never answers must not hold up the server's exit.
    this.abort.abort();
  }

  /** What is pending, and how the last attempts went. */
  async status(): Promise<WorkspaceMirrorStatus> {
    const local = await listRefs(this.store.layout.shadowDir, SESSIONS_PREFIX);
    const pendingSessions: PendingSession[] = [];
    let pendingRefs = 0;
    for (const [prefix, refs] of refsBySession(local)) {
      let count = 0;
      for (const [name, oid] of refs) if (this.pushed?.get(name) !== oid) count++;
      if (count === 0) continue;
      pendingSessions.push({ session: decodeRefComponent(prefix.slice(SESSIONS_PREFIX.length, -1)), refs: count });
      pendingRefs += count;
    }
    const out: WorkspaceMirrorStatus = {
      dir: this.store.workspaceDir,
      remoteRefs: this.refs.base,
      pushing: this.running !== undefined,
      pendingSessions,
      pendingRefs,
      failures: this.failures,
    };
    if (this.lastSuccessAt) out.lastSuccessAt = this.lastSuccessAt;
    if (this.lastError !== undefined) out.lastError = this.lastError;
    if (this.lastErrorAt) out.lastErrorAt = this.lastErrorAt;
    if (this.nextRetryAt !== undefined) out.nextRetryAt = new Date(this.nextRetryAt).toISOString();
    return out;
  }

  private start(): Promise<void> {
    this.timer = undefined;
    this.nextRetryAt = undefined;
    this.dirty = false;
    const run = this.sync().then(
      () => {
        this.failures = 0;
        this.lastError = undefined;
        this.lastErrorAt = undefined;
        this.lastSuccessAt = new Date().toISOString();
      },
      (error: unknown) => {
        this.failures++;
        this.lastError = this.remote.redact(describeRemoteError(error));
        this.lastErrorAt = new Date().toISOString();
        this.dirty = true;
        if (this.stopped) return;
        const delay = Math.min(this.retryMaxMs, this.retryBaseMs * 2 ** (this.failures - 1));
        // Up to a quarter less, so servers restarted together do not retry in step.
        const wait = Math.round(delay * (1 - Math.random() * 0.25));
        this.nextRetryAt = Date.now() + wait;
        this.log(`mirror of ${this.store.workspaceDir} failed (${this.lastError}); retrying in ${Math.ceil(wait / 1000)} s`);
        this.timer = setTimeout(() => this.start(), wait);
        this.timer.unref();
      },
    );
    this.running = run.finally(() => {
      this.running = undefined;
      if (this.dirty && !this.timer && !this.stopped) this.schedule();
    });
    return this.running;
  }

  private async sync(): Promise<void> {
    const local = await listRefs(this.store.layout.shadowDir, SESSIONS_PREFIX);
    const { transportUrl: url, http, onAuth, onAuthFailure } = this.remote;
    const signal = this.abort.signal;
    const advertised = await git.listServerRefs({ http, url, forPush: true, protocolVersion: 1, prefix: this.refs.base, onAuth, onAuthFailure });
    const onRemote = new Map(advertised.map((r) => [r.ref, r.oid]));
    const cache = {};
    const push = async (ref: string, oid: string, overlay?: ObjectOverlay): Promise<void> => {
      if (signal.aborted) throw new Error('stopped');
      await git.push({
        fs: storeGitFs(this.store, new Map([[ref, oid]]), overlay),
        http,
        gitdir: VIRTUAL_GITDIR,
        url,
        ref,
        remoteRef: ref,
        // The mirror's namespace is its own: whatever is there is replaced.
        force: true,
        onAuth,
        onAuthFailure,
        cache,
        signal,
      });
    };
    // Heads first: each push then sends only what the remote's previous head lacks.
    for (const [prefix, refs] of refsBySession(local)) {
      const head = refs.get(`${prefix}head`);
      const remoteName = this.refs.sessionHead(`${prefix}head`);
      if (head && onRemote.get(remoteName) !== head) await push(remoteName, head);
    }
    if (this.pushed === undefined || formatRefList(this.pushed) !== formatRefList(local) || !onRemote.has(this.refs.manifest)) {
      const blobs = new Set<string>();
      for (const oid of new Set(local.values())) {
        let kind = this.kinds.get(oid);
        if (!kind) this.kinds.set(oid, (kind = (await this.store.readObject(oid)).type));
        if (kind === 'blob') blobs.add(oid);
      }
      const previous = onRemote.get(this.refs.manifest);
      const manifest = buildManifest({
        workspace: { version: 1, path: this.store.workspaceDir, name: basename(this.store.workspaceDir) },
        refs: local,
        blobs,
        ...(previous ? { previous } : {}),
      });
      await push(this.refs.manifest, manifest.commit, manifest.objects);
    }
    this.pushed = local;
  }
}
