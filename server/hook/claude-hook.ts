import { pathToFileURL } from 'node:url';
import { sessionUri } from '../../protocol/index.js';
import type { StatusResult } from '../harness/status.js';
import { RemoteError, RpcClient } from '../cli/rpc-client.js';
import { ulid } from '../session/ulid.js';
import { EDIT_TOOLS, parseClaudeHookEvent, type ClaudeHookEvent } from './claude-event.js';
import { ensureServer } from './ensure-server.js';
import { readSessionState, removeSessionState, writeSessionState } from './hook-state.js';

/** Options of {@link runClaudeHook}. */
export interface ClaudeHookOptions {
  /** State directory: registry, hook state, logs. */
  stateDir: string;
  /** Epoch milliseconds by which everything must be done. */
  deadline: number;
  /** How to start a server when none runs. */
  command: { node: string; script: string } | undefined;
  /** Idle time after which a server the hook starts goes away. */
  idleTimeoutMs?: number;
  /** Receives what happened. */
  log: (line: string) => void;
}

/** Error codes the hook recovers from. */
const SESSION_NOT_FOUND = -32001;
const SESSION_ALREADY_EXISTS = -32003;
const INVALID_PARAMS = -32602;

/** Message of a turn the hook starts because an edit arrived with no turn recorded. */
const RESUMED_TURN_MESSAGE = '(turn started at the first edit: its prompt was not recorded)';

/**
 * Handles one Claude Code hook event: finds (or starts) the server for the
 * event's directory and maps the event onto the harness methods.
 * Throws on failure; the caller logs and exits 0 regardless.
 */
export async function runClaudeHook(input: string, options: ClaudeHookOptions): Promise<void> {
  const event = parseClaudeHookEvent(input);
  const action = actionOf(event);
  if (!action) return;
  const entry = await ensureServer({
    stateDir: options.stateDir,
    cwd: event.cwd,
    deadline: options.deadline,
    command: options.command,
    log: options.log,
    ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
  });
  const client = await RpcClient.connect(entry.url, {
    timeoutMs: Math.max(1000, options.deadline - Date.now()),
    clientId: `claude-code-hook-${event.sessionId}`,
    ...(entry.token !== undefined ? { token: entry.token } : {}),
  });
  try {
    await action(new HookContext(client, event, options));
  } finally {
    await client.close();
  }
}

type Action = (ctx: HookContext) => Promise<void>;

function actionOf(event: ClaudeHookEvent): Action | undefined {
  switch (event.hookEventName) {
    case 'SessionStart':
      return (ctx) => ctx.ensureSession();
    case 'UserPromptSubmit':
      return async (ctx) => {
        await ctx.ensureSession();
        await ctx.startTurn(event.promptId ?? ulid(), event.prompt ?? '');
      };
    case 'PreToolUse':
      if (!event.toolName || !EDIT_TOOLS.has(event.toolName) || !event.filePath) return undefined;
      return (ctx) => ctx.beforeEdit(event.filePath!, event.toolName!);
    case 'Stop':
      return (ctx) => ctx.endTurn();
    case 'SessionEnd':
      return (ctx) => ctx.endSession();
    default:
      return undefined;
  }
}

/** One event's connection to the server and what the hook remembers of the session. */
class HookContext {
  readonly channel: string;

  constructor(
    private readonly client: RpcClient,
    private readonly event: ClaudeHookEvent,
    private readonly options: ClaudeHookOptions,
  ) {
    this.channel = sessionUri(event.sessionId);
  }

  /** Creates the session for the event's directory, or reuses it. */
  async ensureSession(): Promise<void> {
    try {
      await this.client.request('createSession', { channel: this.channel, provider: 'claude-code', workingDirectory: pathToFileURL(this.event.cwd).href });
      this.options.log(`created ${this.channel} over ${this.event.cwd}`);
    } catch (error) {
      if (!(error instanceof RemoteError && error.code === SESSION_ALREADY_EXISTS)) throw error;
    }
  }

  async startTurn(turnId: string, message: string): Promise<string> {
    await writeSessionState(this.options.stateDir, this.event.sessionId, { turnId });
    const result = await this.client.request<{ turnId: string }>('harness/turnStarted', { channel: this.channel, turnId, message });
    this.options.log(`${this.channel}: turn ${result.turnId} started`);
    return result.turnId;
  }

  /**
   * Captures the file before the tool edits it. When the server has no
   * matching turn (it restarted, or the prompt event was missed) the active
   * turn is used, or a turn is started now, so the edit is still recorded.
   */
  async beforeEdit(path: string, tool: string): Promise<void> {
    const known = await this.knownTurnId();
    if (known !== undefined) {
      try {
        await this.client.request('harness/beforeEdit', { channel: this.channel, turnId: known, paths: [path], tool });
        return;
      } catch (error) {
        if (!(error instanceof RemoteError && (error.code === INVALID_PARAMS || error.code === SESSION_NOT_FOUND))) throw error;
      }
    }
    await this.ensureSession();
    const turnId = (await this.activeTurnId()) ?? (await this.startTurn(this.event.promptId ?? ulid(), RESUMED_TURN_MESSAGE));
    await writeSessionState(this.options.stateDir, this.event.sessionId, { turnId });
    await this.client.request('harness/beforeEdit', { channel: this.channel, turnId, paths: [path], tool });
  }

  async endTurn(): Promise<void> {
    const turnId = (await this.knownTurnId()) ?? (await this.activeTurnId().catch(() => undefined));
    if (turnId === undefined) {
      this.options.log(`${this.channel}: Stop with no turn to end`);
      return;
    }
    try {
      const { summary } = await this.client.request<{ summary: { total: number } }>('harness/turnEnded', { channel: this.channel, turnId });
      this.options.log(`${this.channel}: turn ${turnId} ended, ${summary.total} files changed`);
    } finally {
      await writeSessionState(this.options.stateDir, this.event.sessionId, {});
    }
  }

  async endSession(): Promise<void> {
    await removeSessionState(this.options.stateDir, this.event.sessionId);
    try {
      await this.client.request('disposeSession', { channel: this.channel });
      this.options.log(`${this.channel}: ended (kept for review)`);
    } catch (error) {
      if (!(error instanceof RemoteError && error.code === SESSION_NOT_FOUND)) throw error;
    }
  }

  private async knownTurnId(): Promise<string | undefined> {
    return this.event.promptId ?? (await readSessionState(this.options.stateDir, this.event.sessionId)).turnId;
  }

  private async activeTurnId(): Promise<string | undefined> {
    const status = await this.client.request<StatusResult>('harness/status', { channel: this.channel, turns: 0 });
    return status.sessions[0]?.activeTurn?.turnId;
  }
}
