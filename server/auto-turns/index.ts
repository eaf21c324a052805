export { AUTO_TURN_MESSAGE, AutoTurns, type AutoTurnsEvents, type AutoTurnsOptions } from './auto-turns.js';
export { startAutoTurns } from './start.js';
export { sameTrees } from './trees.js';
export { watchWorkspaces, type WorkspaceWatch, type WorkspaceWatchOptions } from './workspace-watcher.js';
