/**
 * The AHP session commands (`listSessions`, `createSession`,
 * `disposeSession`) over the session manager: params turned into what the
 * manager takes, progress sent to the client that asked.
 */
import { fileURLToPath } from 'node:url';
import {
  AhpErrorCodes,
  parseChannel,
  ROOT_CHANNEL,
  type CreateSessionParams,
  type DisposeSessionParams,
  type ListSessionsParams,
  type ListSessionsResult,
} from '../../protocol/index.js';
import { DomainError, invalidParams } from '../domain-error.js';
import type { SessionManager } from '../session/session-manager.js';
import { agentName } from '../session/timeline.js';
import type { MethodContext } from './method-registry.js';
import { progressReporter } from './progress.js';
import type { SessionProvider } from './providers.js';

export class SessionCommands implements SessionProvider {
  /** Sessions whose `createSession` is still running: a second one for the same channel is refused. */
  private readonly creating = new Set<string>();

  constructor(private readonly manager: SessionManager) {}

  listSessions(params: ListSessionsParams): ListSessionsResult {
    const all = this.manager.list();
    let start = 0;
    if (params.cursor !== undefined) {
      start = Number(params.cursor);
      if (!/^\d+$/.test(params.cursor) || start > all.length) throw invalidParams(`cursor: unknown cursor "${params.cursor}"`);
    }
    const limit = params.limit ?? 100;
    const page = all.slice(start, start + limit);
    const result: ListSessionsResult = { items: page.map((s) => this.manager.summaryOf(s)) };
    if (start + limit < all.length) result.nextCursor = String(start + limit);
    return result;
  }

  async createSession(params: CreateSessionParams, ctx: MethodContext): Promise<null> {
    const parsed = parseChannel(params.channel);
    if (parsed?.kind !== 'session') throw invalidParams('channel: must be an ahp-session:/<id> URI');
    if (params.provider !== undefined && (typeof params.provider !== 'string' || params.provider.length === 0 || params.provider.length > 100)) {
      throw invalidParams('provider: must be a non-empty string of at most 100 characters');
    }
    const existing = this.manager.get(params.channel);
    if (existing?.isEnded) {
      // The agent resumed a session it had ended: record into it again.
      this.manager.reopen(existing);
      return null;
    }
    if (existing || this.creating.has(params.channel)) {
      throw new DomainError(AhpErrorCodes.SessionAlreadyExists, `session ${params.channel} already exists`);
    }
    const dirs = workingDirectoriesOf(params);
    // Only the client that asked is told (the token is its own), and only while it is subscribed to
    // the root channel: AHP sends a channel's protocol notifications only to that channel's subscribers.
    const { connection } = ctx;
    const progress =
      params.progressToken !== undefined
        ? progressReporter(
            (frame) => {
              if (connection.subscriptions.has(ROOT_CHANNEL)) connection.notify('root/progress', frame);
            },
            params.progressToken,
            snapshotMessage,
          )
        : undefined;
    this.creating.add(params.channel);
    try {
      await this.manager.create({
        id: parsed.id,
        workingDirectories: dirs,
        ended: 'resume',
        ...(params.provider !== undefined ? { agent: agentName(params.provider) } : {}),
        ...(progress ? { onStartProgress: (done: number, total?: number) => progress.update(done, total) } : {}),
      });
    } catch (error) {
      if (error instanceof DomainError) throw error;
      throw invalidParams(`workingDirectory: ${(error as Error).message}`);
    } finally {
      progress?.finish();
      this.creating.delete(params.channel);
    }
    return null;
  }

  /**
   * AHP's disposal: the session is removed, as `forgetSession` removes it —
   * its channels go (`root/sessionRemoved` to root subscribers, its
   * changesets `changeset/cleared`) and its recorded history leaves the
   * store; files on disk are untouched. An agent's session end
   * (`harness/sessionEnded`) only ends recording and keeps the session.
   */
  async disposeSession(params: DisposeSessionParams): Promise<null> {
    const session = this.manager.require(params.channel);
    // An active turn is recorded as cancelled first; then the chat leaves the session's catalogue, as AHP
    // asks when a session is torn down, so subscribers of the chat alone know to let it go.
    await this.manager.dispose(params.channel);
    if (!session.isDisposed) session.dispatchSession({ type: 'session/chatRemoved', chat: session.chatUri });
    await this.manager.forget(params.channel);
    return null;
  }
}

const COUNT = new Intl.NumberFormat('en-US');

function snapshotMessage(progress: number, total?: number): string {
  return `Recording the working directory: ${COUNT.format(progress)}${total !== undefined ? ` of ${COUNT.format(total)}` : ''} files`;
}

/** The working directories a `createSession` names: `config.workingDirectories`, else `workingDirectory`. */
function workingDirectoriesOf(params: CreateSessionParams): string[] {
  const fromConfig = params.config?.['workingDirectories'];
  if (fromConfig !== undefined) {
    if (!Array.isArray(fromConfig) || fromConfig.length === 0 || !fromConfig.every((d) => typeof d === 'string' && d.length > 0)) {
      throw invalidParams('config.workingDirectories: must be a non-empty array of file: URIs or absolute paths');
    }
    return fromConfig.map((d: string, i: number) => toPath(d, `config.workingDirectories[${i}]`));
  }
  if (params.workingDirectory === undefined) throw invalidParams('workingDirectory: required (a file: URI)');
  return [toPath(params.workingDirectory, 'workingDirectory')];
}

function toPath(value: string, field: string): string {
  if (value.startsWith('file:')) {
    try {
      return fileURLToPath(value);
    } catch {
      throw invalidParams(`${field}: not a valid file: URI`);
    }
  }
  if (value.startsWith('/')) return value;
  throw invalidParams(`${field}: must be a file: URI or an absolute path`);
}
