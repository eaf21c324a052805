import { cwdDirectories, type HookAgent } from './hook-event.js';

/** Gemini CLI's built-in tools that write files (https://geminicli.com/docs/tools/file-system). */
const GEMINI_EDIT_TOOLS: ReadonlySet<string> = new Set(['write_file', 'replace']);
/** Gemini CLI's shell tool (https://geminicli.com/docs/tools/shell): a step before each command. */
const GEMINI_SHELL_TOOLS: ReadonlySet<string> = new Set(['run_shell_command']);

/**
 * Gemini CLI (https://geminicli.com/docs/hooks/reference): every event
 * carries `session_id`, `transcript_path`, `cwd`, `hook_event_name` and
 * `timestamp`. On exit code 0 stdout is parsed as JSON, and anything else
 * printed there breaks it: the hook answers `{}`, no decision.
 */
export const geminiAgent: HookAgent = {
  name: 'gemini',
  provider: 'gemini-cli',
  events: { sessionStart: 'SessionStart', promptSubmit: 'BeforeAgent', beforeTool: 'BeforeTool', stop: 'AfterAgent', sessionEnd: 'SessionEnd' },
  editTools: GEMINI_EDIT_TOOLS,
  shellTools: GEMINI_SHELL_TOOLS,
  pathFields: ['file_path'],
  sessionIdFields: ['session_id'],
  directoriesOf: cwdDirectories,
  answer: () => '{}',
  // BeforeAgent: hookSpecificOutput.additionalContext is added to the agent's context for the turn.
  contextAnswer: (name, context) => JSON.stringify({ hookSpecificOutput: { hookEventName: name, additionalContext: context } }),
};
