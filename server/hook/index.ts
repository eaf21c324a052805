export { EDIT_TOOLS, parseClaudeHookEvent, type ClaudeHookEvent, type ClaudeHookEventName } from './claude-event.js';
export { runClaudeHook, type ClaudeHookOptions } from './claude-hook.js';
export { ensureServer, type EnsureServerOptions } from './ensure-server.js';
export { hookLog, logDir } from './hook-log.js';
export { hookStateDir, readSessionState, removeSessionState, writeSessionState, type ClaudeSessionState } from './hook-state.js';
