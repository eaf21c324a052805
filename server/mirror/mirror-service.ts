/**
 * Mirrors every store the server records into: each working directory of
 * every session gets a {@link WorkspaceMirror}, synced after each turn, after
 * each operation (which writes a safety checkpoint), when a session ends, and
 * when a periodic look finds refs that changed otherwise. `mirror/status`
 * answers what is pending.
 */
import type { MirrorStatus } from '../../protocol/index.js';
import { DisposableStore } from '../events.js';
import type { MethodTable } from '../method-table.js';
import type { RecordingSession } from '../session/recording-session.js';
import type { SessionManager } from '../session/session-manager.js';
import { WorkspaceRoot } from '../session/workspace-root.js';
import type { MirrorRemote } from './mirror-remote.js';
import { WorkspaceMirror, type MirrorTiming } from './workspace-mirror.js';

export type { MirrorStatus } from '../../protocol/index.js';

/** Options of {@link MirrorService}. */
export interface MirrorServiceOptions {
  remote: MirrorRemote;
  /** The state directory the sessions' stores live in. */
  stateDir: string;
  timing?: MirrorTiming;
  /** How often refs are compared with what was pushed, for changes no event announced (default 30 s). */
  pollMs?: number;
  log?: (line: string) => void;
}

export class MirrorService {
  private readonly mirrors = new Map<string, { mirror: WorkspaceMirror; root: Promise<WorkspaceRoot> }>();
  private readonly poll: NodeJS.Timeout;
  private stopping = false;
  /** The subscriptions to the session manager and to every tracked session. */
  private readonly subscriptions = new DisposableStore();

  constructor(
    sessions: SessionManager,
    private readonly options: MirrorServiceOptions,
  ) {
    for (const session of sessions.list()) this.track(session);
    this.subscriptions.add(sessions.onSessionAdded((session) => this.track(session)));
    this.poll = setInterval(() => {
      for (const { mirror } of this.mirrors.values()) void mirror.scheduleIfChanged();
    }, options.pollMs ?? 30_000);
    this.poll.unref();
  }

  /** `mirror/status`, served while mirroring. */
  methods(): MethodTable {
    return {
      'mirror/status': {
        request: () => this.status(),
        check: (params) =>
          params === undefined || params === null || (typeof params === 'object' && !Array.isArray(params)) ? undefined : 'params must be an object',
      },
    };
  }

  async status(): Promise<MirrorStatus> {
    return { url: this.options.remote.url, workspaces: await Promise.all([...this.mirrors.values()].map(({ mirror }) => mirror.status())) };
  }

  /** Syncs every store now; resolves when each sync succeeded or failed once (tests and shutdown). */
  async syncNow(): Promise<void> {
    await Promise.all([...this.mirrors.values()].map(({ mirror }) => mirror.syncNow()));
  }

  /** Stops syncing: a last sync gets `graceMs` to finish, then the stores are let go. */
  async stop(graceMs?: number): Promise<void> {
    this.stopping = true;
    this.subscriptions.dispose();
    clearInterval(this.poll);
    const all = [...this.mirrors.values()];
    this.mirrors.clear();
    await Promise.all(all.map(({ mirror }) => mirror.stop(graceMs)));
    await Promise.allSettled(all.map(async ({ root }) => (await root).release()));
  }

  private track(session: RecordingSession): void {
    if (this.stopping) return;
    const mine: WorkspaceMirror[] = [];
    for (const root of session.files.list()) {
      let entry = this.mirrors.get(root.dir);
      if (!entry) {
        // Held by the mirror too, so a session closing mid-push does not close the store under it.
        entry = {
          mirror: new WorkspaceMirror(root.store, this.options.remote, this.options.timing, this.options.log),
          root: WorkspaceRoot.acquire({ stateDir: this.options.stateDir, dir: root.dir }),
        };
        entry.root.catch(() => undefined);
        this.mirrors.set(root.dir, entry);
      }
      mine.push(entry.mirror);
    }
    const schedule = (): void => {
      for (const mirror of mine) mirror.schedule();
    };
    this.subscriptions.add(session.onTurnEnded(schedule));
    this.subscriptions.add(session.onUserAction(schedule));
    this.subscriptions.add(session.onEnded(schedule));
    schedule();
  }
}
