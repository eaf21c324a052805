/** The Claude Code hook events this hook acts on. */
export type ClaudeHookEventName = 'SessionStart' | 'UserPromptSubmit' | 'PreToolUse' | 'Stop' | 'SessionEnd';

/** Tools whose file edits are captured before they run. */
export const EDIT_TOOLS: ReadonlySet<string> = new Set(['Edit', 'Write', 'MultiEdit', 'NotebookEdit']);

/** One Claude Code hook event, reduced to the fields used here. */
export interface ClaudeHookEvent {
  /** Which event. */
  hookEventName: string;
  /** Claude Code's session id; also ours (`ahp-session:/<sessionId>`). */
  sessionId: string;
  /** The workspace directory Claude Code runs in (absolute). */
  cwd: string;
  /** `UserPromptSubmit`: the prompt. */
  prompt?: string;
  /** Id of the prompt a later event belongs to (newer Claude Code versions). */
  promptId?: string;
  /** `PreToolUse`: the tool about to run. */
  toolName?: string;
  /** `PreToolUse`: the file the tool edits (`tool_input.file_path` or `tool_input.notebook_path`). */
  filePath?: string;
}

/** Session ids become a URI path segment and a file name: keep them to a safe alphabet. */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Parses the JSON Claude Code writes on a hook's stdin; throws with the reason when it is unusable. */
export function parseClaudeHookEvent(text: string): ClaudeHookEvent {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`hook input is not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('hook input must be a JSON object');
  const v = value as Record<string, unknown>;
  const name = v['hook_event_name'];
  const sessionId = v['session_id'];
  const cwd = v['cwd'];
  if (typeof name !== 'string' || name.length === 0) throw new Error('hook input has no hook_event_name');
  if (typeof sessionId !== 'string' || !SESSION_ID.test(sessionId)) throw new Error(`hook input has no usable session_id: ${JSON.stringify(sessionId)}`);
  if (typeof cwd !== 'string' || !cwd.startsWith('/')) throw new Error(`hook input has no absolute cwd: ${JSON.stringify(cwd)}`);
  const event: ClaudeHookEvent = { hookEventName: name, sessionId, cwd };
  if (typeof v['prompt'] === 'string') event.prompt = v['prompt'];
  if (typeof v['prompt_id'] === 'string' && v['prompt_id'].length > 0 && v['prompt_id'].length <= 200) event.promptId = v['prompt_id'];
  if (typeof v['tool_name'] === 'string') event.toolName = v['tool_name'];
  const input = v['tool_input'];
  if (typeof input === 'object' && input !== null) {
    const i = input as Record<string, unknown>;
    const path = typeof i['file_path'] === 'string' ? i['file_path'] : i['notebook_path'];
    if (typeof path === 'string' && path.length > 0 && !path.includes('\0')) event.filePath = path;
  }
  return event;
}
