/** Root channel actions (`root/*`) this server emits or reduces. */

import type { AgentInfo } from './state.js';

/** The available agents changed (full replacement). */
export interface RootAgentsChangedAction {
  /** Discriminant. */
  type: 'root/agentsChanged';
  /** New agent list. */
  agents: AgentInfo[];
}

/** The number of non-disposed sessions changed. */
export interface RootActiveSessionsChangedAction {
  /** Discriminant. */
  type: 'root/activeSessionsChanged';
  /** Current count of active sessions. */
  activeSessions: number;
}

/** Every action the root reducer handles. */
export type RootAction = RootAgentsChangedAction | RootActiveSessionsChangedAction;

/** The `type` of every root action. */
export type RootActionType = RootAction['type'];
