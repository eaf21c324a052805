import { cwdDirectories, type HookAgent } from './hook-event.js';

/** Claude Code tools whose file edits are captured before they run. */
const CLAUDE_EDIT_TOOLS: ReadonlySet<string> = new Set(['Edit', 'Write', 'MultiEdit', 'NotebookEdit']);
/** Claude Code's shell tool: a step before each command, so what it writes is the agent's. */
const CLAUDE_SHELL_TOOLS: ReadonlySet<string> = new Set(['Bash']);

/** Longest `prompt_id` taken as a turn id. */
const MAX_PROMPT_ID = 200;

/**
 * Claude Code (https://docs.claude.com/en/docs/claude-code/hooks): every
 * event carries `session_id` and `cwd`; its hooks read nothing from us on
 * stdout, but for the open review comments handed at `UserPromptSubmit`
 * when asked (`--comments`).
 */
export const claudeAgent: HookAgent = {
  name: 'claude',
  provider: 'claude-code',
  events: { sessionStart: 'SessionStart', promptSubmit: 'UserPromptSubmit', beforeTool: 'PreToolUse', stop: 'Stop', sessionEnd: 'SessionEnd' },
  editTools: CLAUDE_EDIT_TOOLS,
  shellTools: CLAUDE_SHELL_TOOLS,
  pathFields: ['file_path', 'notebook_path'],
  sessionIdFields: ['session_id'],
  directoriesOf: cwdDirectories,
  // Newer Claude Code versions name the prompt every event belongs to: it is the turn id.
  turnIdOf: (input) => {
    const id = input['prompt_id'];
    return typeof id === 'string' && id.length > 0 && id.length <= MAX_PROMPT_ID ? id : undefined;
  },
  answer: () => '',
  // UserPromptSubmit: on exit 0, hookSpecificOutput.additionalContext is added to the model's context.
  contextAnswer: (name, context) => JSON.stringify({ hookSpecificOutput: { hookEventName: name, additionalContext: context } }),
};
