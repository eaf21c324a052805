import { checkDirectory, type HookAgent, type HookTurnState } from './hook-event.js';

/** Cursor tools (`preToolUse` matcher values) that write files. */
const CURSOR_EDIT_TOOLS: ReadonlySet<string> = new Set(['Write', 'Delete']);

/** `stop`'s `status` as a turn state. */
const TURN_STATES: ReadonlyMap<unknown, HookTurnState> = new Map([
  ['completed', 'complete'],
  ['aborted', 'cancelled'],
  ['error', 'error'],
]);

/**
 * Cursor (https://cursor.com/docs/hooks, "Reference"): every event carries
 * `conversation_id`, `generation_id`, `hook_event_name` and
 * `workspace_roots`; `sessionStart` / `sessionEnd` add `session_id`, the
 * same as `conversation_id`. A hook answers with JSON on stdout:
 * `permission` for the events that can refuse an action, `continue` for
 * `beforeSubmitPrompt`, nothing required for the others. A recorder never
 * decides for the user: a `permission` answer, even "allow", would skip
 * the approval the user configured, so it gives none. `afterFileEdit`
 * comes once the file is written: the turn's baseline already holds what it
 * was (see docs/harness.md, Cursor), so it only makes sure a turn records.
 * A shell command is a step before it runs, from `preToolUse` for `Shell`
 * or from `beforeShellExecution` (`command`, `cwd`), with the tool name
 * `Shell` either way: a configuration hooks one of the two.
 */
export const cursorAgent: HookAgent = {
  name: 'cursor',
  provider: 'cursor',
  events: {
    sessionStart: 'sessionStart',
    promptSubmit: 'beforeSubmitPrompt',
    beforeTool: 'preToolUse',
    afterFileEdit: 'afterFileEdit',
    beforeShell: 'beforeShellExecution',
    stop: 'stop',
    sessionEnd: 'sessionEnd',
  },
  editTools: CURSOR_EDIT_TOOLS,
  // preToolUse names the shell tool `Shell`; beforeShellExecution, the older event for it, is recorded the same way.
  shellTools: new Set(['Shell']),
  shellEventTool: 'Shell',
  pathFields: ['file_path', 'path'],
  sessionIdFields: ['conversation_id', 'session_id'],
  directoriesOf: (input) => {
    const roots = input['workspace_roots'];
    if (!Array.isArray(roots) || roots.length === 0) throw new Error(`hook input has no workspace_roots: ${JSON.stringify(roots)}`);
    return roots.map((root: unknown, i) => checkDirectory(root, `workspace_roots[${i}]`));
  },
  turnStateOf: (input) => TURN_STATES.get(input['status']),
  answer: (name) => (name === 'beforeSubmitPrompt' ? '{"continue":true}' : '{}'),
};
