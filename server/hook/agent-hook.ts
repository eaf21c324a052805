import { pathToFileURL } from 'node:url';
import { sessionUri } from '../../protocol/common/channels.js';
import type { RpcClient } from '../client/rpc-client.js';
import { RemoteError } from '../client/remote-error.js';
import { ulid } from '../ulid.js';
import { parseHookEvent, type AgentHookEvent, type HookAction, type HookAgent, type HookTurnState } from './hook-event.js';
import { readSessionState, removeSessionState, writeSessionState } from './hook-state.js';

/** Options of {@link runAgentHook}. */
export interface AgentHookOptions {
  /** State directory: registry, hook state, logs. */
  stateDir: string;
  /** Epoch milliseconds by which everything must be done. */
  deadline: number;
  /** How to start a server when none runs. */
  command: { node: string; script: string } | undefined;
  /** Idle time after which a server the hook starts goes away (10 minutes when omitted). */
  idleTimeoutMs?: number;
  /** Receives what happened. */
  log: (line: string) => void;
  /** Hand the session's open review comments to the agent at its prompt event (when the agent has a way to add context there). */
  comments?: boolean;
}

/** Error codes the hook recovers from. */
const SESSION_NOT_FOUND = -32001;
const SESSION_ALREADY_EXISTS = -32003;
const INVALID_PARAMS = -32602;

/** Message of a turn the hook starts because an edit arrived with no turn recorded. */
const RESUMED_TURN_MESSAGE = '(turn started at the first edit: its prompt was not recorded)';
/** Message of a turn the hook starts because a finished edit arrived with no turn recorded. */
const LATE_TURN_MESSAGE = '(turn started after an edit: its prompt was not recorded)';

/**
 * Handles one hook event of `agent`: finds (or starts) the server for the
 * event's first directory and maps the event onto the harness methods.
 * Throws on failure; the caller logs and exits 0 regardless. What reaches
 * the server is loaded only for the events that do (an agent waits on the
 * hook at every tool call). Resolves to the context to hand to the agent
 * with its answer: the open review comments at the prompt event when
 * `options.comments` is on, else undefined.
 */
export async function runAgentHook(agent: HookAgent, input: string, options: AgentHookOptions): Promise<string | undefined> {
  const event = parseHookEvent(agent, input);
  const action = event.action;
  if (!action) return undefined;
  if (action.kind === 'continue-turn' || action.kind === 'before-shell') {
    const recording = (await readSessionState(options.stateDir, agent.name, event.sessionId)).turnId !== undefined;
    // A finished edit inside a recorded turn needs nothing from the server.
    if (action.kind === 'continue-turn' && recording) return undefined;
    // A shell command outside a recorded turn starts neither a server nor a turn: most commands write nothing.
    if (action.kind === 'before-shell' && !recording) return undefined;
  }
  const [{ DEFAULT_HOOK_IDLE_MS, ensureServer }, { RpcClient }] = await Promise.all([import('../client/ensure-server.js'), import('../client/rpc-client.js')]);
  const entry = await ensureServer({
    stateDir: options.stateDir,
    cwd: event.workingDirectories[0]!,
    deadline: options.deadline,
    command: options.command,
    log: options.log,
    idleTimeoutMs: options.idleTimeoutMs ?? DEFAULT_HOOK_IDLE_MS,
  });
  const client = await RpcClient.connect(entry.url, {
    timeoutMs: Math.max(1000, options.deadline - Date.now()),
    clientId: `${agent.provider}-hook-${event.sessionId}`,
    ...(entry.token !== undefined ? { token: entry.token } : {}),
  });
  try {
    const context = new HookContext(client, agent, event, options);
    if (action.kind === 'start-turn' && options.comments === true && agent.contextAnswer !== undefined) return await context.startTurnWithComments(action);
    await context.run(action);
    return undefined;
  } finally {
    await client.close();
  }
}

/** One event's connection to the server and what the hook remembers of the session. */
class HookContext {
  readonly channel: string;

  constructor(
    private readonly client: RpcClient,
    private readonly agent: HookAgent,
    private readonly event: AgentHookEvent,
    private readonly options: AgentHookOptions,
  ) {
    this.channel = sessionUri(event.sessionId);
  }

  async run(action: HookAction): Promise<void> {
    switch (action.kind) {
      case 'open-session':
        return this.ensureSession();
      case 'start-turn':
        await this.ensureSession();
        await this.startTurn(action.turnId ?? ulid(), action.message);
        return;
      case 'before-edit':
        return this.beforeEdit([action.path], action.tool, action.turnId);
      case 'before-shell':
        // A step that names no file: whatever changes while the command runs is its doing.
        return this.beforeEdit([], action.tool, action.turnId);
      case 'continue-turn':
        return this.continueTurn();
      case 'end-turn':
        return this.endTurn(action.turnId, action.state);
      case 'end-session':
        return this.endSession();
    }
  }

  /**
   * Starts the prompt's turn and, meanwhile, reads the session's open review
   * comments for the agent (a short wait at most; none when the server
   * does not answer in time).
   */
  async startTurnWithComments(action: Extract<HookAction, { kind: 'start-turn' }>): Promise<string | undefined> {
    await this.ensureSession();
    const { openCommentsContext } = await import('./comment-context.js');
    const [started, comments] = await Promise.allSettled([
      this.startTurn(action.turnId ?? ulid(), action.message),
      openCommentsContext(this.client, this.channel, this.options.log),
    ]);
    // The comments reach the agent even when the turn could not start (that is logged).
    if (started.status === 'rejected') this.options.log(`error: ${(started.reason as Error).message}`);
    return comments.status === 'fulfilled' ? comments.value : undefined;
  }

  /** Creates the session for the event's directories, or reuses it. */
  private async ensureSession(): Promise<void> {
    const [first, ...more] = this.event.workingDirectories;
    try {
      await this.client.request('createSession', {
        channel: this.channel,
        provider: this.agent.provider,
        workingDirectory: pathToFileURL(first!).href,
        ...(more.length > 0 ? { config: { workingDirectories: this.event.workingDirectories } } : {}),
      });
      this.options.log(`created ${this.channel} over ${this.event.workingDirectories.join(', ')}`);
    } catch (error) {
      if (!(error instanceof RemoteError && error.code === SESSION_ALREADY_EXISTS)) throw error;
    }
  }

  private async startTurn(turnId: string, message: string): Promise<string> {
    await this.remember(turnId);
    const result = await this.client.request('harness/turnStarted', { channel: this.channel, turnId, message });
    this.options.log(`${this.channel}: turn ${result.turnId} started`);
    return result.turnId;
  }

  /**
   * Records the tool call's step and captures the files it names (none for
   * a shell command) before it writes. When the server has no matching turn
   * (it restarted, or the prompt event was missed) the active turn is used,
   * or a turn is started now, so the edit is still recorded.
   */
  private async beforeEdit(paths: string[], tool: string, eventTurnId: string | undefined): Promise<void> {
    const known = eventTurnId ?? (await this.knownTurnId());
    if (known !== undefined) {
      try {
        await this.client.request('harness/beforeEdit', { channel: this.channel, turnId: known, paths, tool });
        return;
      } catch (error) {
        if (!(error instanceof RemoteError && (error.code === INVALID_PARAMS || error.code === SESSION_NOT_FOUND))) throw error;
      }
    }
    const turnId = await this.recordingTurn(eventTurnId, RESUMED_TURN_MESSAGE);
    await this.client.request('harness/beforeEdit', { channel: this.channel, turnId, paths, tool });
  }

  /** A file was written with no turn remembered: the rest of the agent's work goes into a turn. */
  private async continueTurn(): Promise<void> {
    const turnId = await this.recordingTurn(undefined, LATE_TURN_MESSAGE);
    this.options.log(`${this.channel}: ${this.event.hookEventName} with no turn recorded; recording into turn ${turnId}`);
  }

  /** The server's active turn, or one started now, remembered as the hook's turn. */
  private async recordingTurn(eventTurnId: string | undefined, message: string): Promise<string> {
    await this.ensureSession();
    const active = await this.activeTurnId();
    if (active === undefined) return this.startTurn(eventTurnId ?? ulid(), message);
    await this.remember(active);
    return active;
  }

  private async endTurn(eventTurnId: string | undefined, state: HookTurnState | undefined): Promise<void> {
    const turnId = eventTurnId ?? (await this.knownTurnId()) ?? (await this.activeTurnId().catch(() => undefined));
    if (turnId === undefined) {
      this.options.log(`${this.channel}: ${this.event.hookEventName} with no turn to end`);
      return;
    }
    try {
      const { summary } = await this.client.request('harness/turnEnded', {
        channel: this.channel,
        turnId,
        ...(state !== undefined ? { state } : {}),
      });
      this.options.log(`${this.channel}: turn ${turnId} ended${state ? ` (${state})` : ''}, ${summary.total} files changed`);
    } finally {
      await writeSessionState(this.options.stateDir, this.agent.name, this.event.sessionId, {});
    }
  }

  private async endSession(): Promise<void> {
    await removeSessionState(this.options.stateDir, this.agent.name, this.event.sessionId);
    try {
      await this.client.request('harness/sessionEnded', { channel: this.channel });
      this.options.log(`${this.channel}: ended (kept for review)`);
    } catch (error) {
      if (!(error instanceof RemoteError && error.code === SESSION_NOT_FOUND)) throw error;
    }
  }

  /** The turn the hook remembers for this agent session. */
  private async knownTurnId(): Promise<string | undefined> {
    return (await readSessionState(this.options.stateDir, this.agent.name, this.event.sessionId)).turnId;
  }

  private async remember(turnId: string): Promise<void> {
    await writeSessionState(this.options.stateDir, this.agent.name, this.event.sessionId, { turnId });
  }

  private async activeTurnId(): Promise<string | undefined> {
    const status = await this.client.request('harness/status', { channel: this.channel, turns: 0 });
    return status.sessions[0]?.activeTurn?.turnId;
  }
}
