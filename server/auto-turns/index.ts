export type { AutoTurns } from './auto-turns.js';
export { startAutoTurns } from './start.js';
