export { runAgentHook, type AgentHookOptions } from './agent-hook.js';
export { CLAUDE_EDIT_TOOLS, claudeAgent, parseClaudeHookEvent } from './claude-event.js';
export { CURSOR_EDIT_TOOLS, cursorAgent, parseCursorHookEvent } from './cursor-event.js';
export { ensureServer, type EnsureServerOptions } from './ensure-server.js';
export { GEMINI_EDIT_TOOLS, geminiAgent, parseGeminiHookEvent } from './gemini-event.js';
export { hookLog, logDir } from './hook-log.js';
export { parseHookEvent, type AgentHookEvent, type HookAction, type HookAgent, type HookTurnState } from './hook-event.js';
export { hookStateDir, readSessionState, removeSessionState, writeSessionState, type HookSessionState } from './hook-state.js';
