/** The turn states an agent's stop event can report. */
export type HookTurnState = 'complete' | 'cancelled' | 'error';

/** What one agent hook event asks of the recorder. */
export type HookAction =
  /** The agent opened a session: create ours, or reuse it. */
  | { kind: 'open-session' }
  /** A prompt was submitted: a turn starts with it as its message. */
  | { kind: 'start-turn'; message: string; turnId?: string }
  /** A tool is about to write `path`: a step checkpoint, and a capture when snapshots cannot see the file. */
  | { kind: 'before-edit'; path: string; tool: string; turnId?: string }
  /** A shell command is about to run: a step checkpoint naming no file, so whatever changes while it runs is its doing. */
  | { kind: 'before-shell'; tool: string; turnId?: string }
  /** A tool has written a file and no event came before it: a turn records what follows. */
  | { kind: 'continue-turn' }
  /** The agent finished answering: the turn ends. */
  | { kind: 'end-turn'; turnId?: string; state?: HookTurnState }
  /** The agent's session ended: ours ends, kept for review. */
  | { kind: 'end-session' };

/** One agent hook event, reduced to what the recorder needs. */
export interface AgentHookEvent {
  /** The agent's name for the event, for the log. */
  hookEventName: string;
  /** The agent's session id; also ours (`ahp-session:/<sessionId>`). */
  sessionId: string;
  /** The directories the agent works in (absolute); the server is found, or started, for the first. */
  workingDirectories: string[];
  /** What to do; undefined for events the recorder does not act on. */
  action: HookAction | undefined;
}

/** An agent whose hook events `changeset-server hook <name>` reads: its vocabulary and its answers. */
export interface HookAgent {
  /** The command's argument; also names the hook's state folder and log lines. */
  name: string;
  /** The `provider` our sessions are created with, which titles them ("Cursor — <first prompt>"). */
  provider: string;
  /** The agent's names for the events the recorder acts on. */
  events: {
    sessionStart: string;
    /** Carries the prompt in `prompt`. */
    promptSubmit: string;
    /** Carries `tool_name` and `tool_input` before the tool runs. */
    beforeTool: string;
    /** Reports a file the agent has written, when the agent has such an event. */
    afterFileEdit?: string;
    /** Comes before a shell command runs, when the agent has an event of its own for it (not a tool at `beforeTool`). */
    beforeShell?: string;
    stop: string;
    sessionEnd: string;
  };
  /** Tools that write files. */
  editTools: ReadonlySet<string>;
  /** Tools (at `beforeTool`) that run shell commands, which may write any file. */
  shellTools: ReadonlySet<string>;
  /** The tool name a step records for the `beforeShell` event. */
  shellEventTool?: string;
  /** The `tool_input` fields that name the file a tool writes, in order of preference. */
  pathFields: readonly string[];
  /** The fields that may hold the session id, in order of preference. */
  sessionIdFields: readonly string[];
  /** The directories an event says the agent works in; throws when it names none. */
  directoriesOf(input: Record<string, unknown>): string[];
  /** The turn id an event names, when the agent sends one. */
  turnIdOf?(input: Record<string, unknown>): string | undefined;
  /** How the turn ended, from the stop event, when the agent says. */
  turnStateOf?(input: Record<string, unknown>): HookTurnState | undefined;
  /** What the agent reads on stdout as "go on" after this event ('' for nothing); the event name is undefined when the input was unreadable. */
  answer(hookEventName: string | undefined): string;
  /**
   * The answer to the prompt event that also hands `context` (the open
   * review comments) to the model, in the agent's documented way; absent
   * when the agent has none at its prompt event.
   */
  contextAnswer?(hookEventName: string, context: string): string;
}

/** Parses the JSON `agent` writes on a hook's stdin; throws with the reason when it is unusable. */
export function parseHookEvent(agent: HookAgent, text: string): AgentHookEvent {
  const input = parseHookObject(text);
  const hookEventName = hookEventNameOf(input);
  const idField = agent.sessionIdFields.find((field) => input[field] !== undefined) ?? agent.sessionIdFields[0]!;
  const sessionId = checkSessionId(input[idField], idField);
  const workingDirectories = agent.directoriesOf(input);
  return { hookEventName, sessionId, workingDirectories, action: hookActionOf(agent, hookEventName, input) };
}

function hookActionOf(agent: HookAgent, name: string, input: Record<string, unknown>): HookAction | undefined {
  const turnId = agent.turnIdOf?.(input);
  const named = turnId !== undefined ? { turnId } : {};
  switch (name) {
    case agent.events.sessionStart:
      return { kind: 'open-session' };
    case agent.events.promptSubmit:
      return { kind: 'start-turn', message: typeof input['prompt'] === 'string' ? input['prompt'] : '', ...named };
    case agent.events.beforeTool: {
      const tool = input['tool_name'];
      if (typeof tool === 'string' && agent.shellTools.has(tool)) return { kind: 'before-shell', tool, ...named };
      const args = toolInputOf(input);
      const path = agent.pathFields.map((field) => toolPath(args[field])).find((p) => p !== undefined);
      if (typeof tool !== 'string' || !agent.editTools.has(tool) || !path) return undefined;
      return { kind: 'before-edit', path, tool, ...named };
    }
    case agent.events.afterFileEdit:
      return { kind: 'continue-turn' };
    case agent.events.beforeShell:
      return { kind: 'before-shell', tool: agent.shellEventTool ?? name, ...named };
    case agent.events.stop: {
      const state = agent.turnStateOf?.(input);
      return { kind: 'end-turn', ...named, ...(state ? { state } : {}) };
    }
    case agent.events.sessionEnd:
      return { kind: 'end-session' };
    default:
      return undefined;
  }
}

/** Session ids become a URI path segment and a file name: keep them to a safe alphabet. */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The JSON object on a hook's stdin; throws when it is not one. */
function parseHookObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`hook input is not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('hook input must be a JSON object');
  return value as Record<string, unknown>;
}

/** `hook_event_name`, which every agent sends; throws when it is missing. */
function hookEventNameOf(input: Record<string, unknown>): string {
  const name = input['hook_event_name'];
  if (typeof name !== 'string' || name.length === 0) throw new Error('hook input has no hook_event_name');
  return name;
}

/** The event name of raw hook input, or undefined when it cannot be read (for the answer on stdout). */
export function peekHookEventName(text: string): string | undefined {
  try {
    return hookEventNameOf(parseHookObject(text));
  } catch {
    return undefined;
  }
}

/** Checks a session id taken from `field`; throws naming the field when it is unusable. */
function checkSessionId(value: unknown, field: string): string {
  if (typeof value !== 'string' || !SESSION_ID.test(value)) throw new Error(`hook input has no usable ${field}: ${JSON.stringify(value)}`);
  return value;
}

/** Checks a working directory taken from `field`; throws naming the field when it is not absolute. */
export function checkDirectory(value: unknown, field: string): string {
  if (typeof value !== 'string' || !value.startsWith('/')) throw new Error(`hook input has no absolute ${field}: ${JSON.stringify(value)}`);
  return value;
}

/** The `cwd` an event carries, as the one working directory. */
export function cwdDirectories(input: Record<string, unknown>): string[] {
  return [checkDirectory(input['cwd'], 'cwd')];
}

/** A path a tool names, when it is one: a non-empty string without NUL. */
function toolPath(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && !value.includes('\0') ? value : undefined;
}

/** A tool's arguments when they are an object (MCP tools may send a JSON string instead). */
function toolInputOf(input: Record<string, unknown>): Record<string, unknown> {
  const value = input['tool_input'];
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
