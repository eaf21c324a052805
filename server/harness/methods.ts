import type { ChangesetServer } from '../app.js';
import type { SessionManager } from '../session/session-manager.js';
import type { TurnSummary } from '../session/turn-summary.js';
import { registerPresentFiles } from './present-files.js';
import type { PresentedReadOptions } from './presented-content.js';
import {
  checkBeforeEdit,
  checkStatus,
  checkTurnEnded,
  checkTurnStarted,
  type BeforeEditParams,
  type StatusParams,
  type TurnEndedParams,
  type TurnStartedParams,
} from './params.js';
import { DEFAULT_STATUS_TURNS, sessionStatusOf, type StatusResult } from './status.js';

/** Result of `harness/turnStarted`. */
export interface TurnStartedResult {
  /** The turn id (the one given, or one the server picked). */
  turnId: string;
  /** The chat channel whose `turns` list the session's turns. */
  chat: string;
}

/** Result of `harness/beforeEdit`. */
export interface BeforeEditResult {
  /** Absolute paths whose content is now safe (temporary-directory paths outside the workspace are skipped). */
  captured: string[];
}

/** Result of `harness/turnEnded`. */
export interface TurnEndedResult {
  /** What the turn changed. */
  summary: TurnSummary;
}

/** Optional hook run after a turn has ended and before `harness/turnEnded` answers (changesets update there). */
export type AfterTurnEnded = (sessionUri: string, turnId: string) => Promise<void>;

/**
 * Registers the harness methods an agent in another process uses to record
 * turns: `harness/turnStarted`, `harness/beforeEdit`, `harness/turnEnded`,
 * and `harness/status` to see what is being recorded. `afterTurnEnded`
 * supplies a step (changesets updating) that runs before `turnEnded`
 * answers.
 */
export function registerHarnessMethods(
  server: ChangesetServer,
  sessions: SessionManager,
  afterTurnEnded?: () => AfterTurnEnded | undefined,
  presented: PresentedReadOptions = {},
): void {
  server.registerRequest<TurnStartedParams, TurnStartedResult>(
    'harness/turnStarted',
    async (params) => {
      const session = sessions.require(params.channel);
      sessions.turnRequested(session);
      const turn = await session.startTurn({
        ...(params.turnId !== undefined ? { id: params.turnId } : {}),
        ...(params.message !== undefined ? { message: params.message } : {}),
      });
      return { turnId: turn.id, chat: session.chatUri };
    },
    { check: checkTurnStarted },
  );

  server.registerRequest<BeforeEditParams, BeforeEditResult>(
    'harness/beforeEdit',
    async (params) => {
      const session = sessions.require(params.channel);
      const captured = await session.beforeEdit(params.turnId, params.paths, params.tool !== undefined ? { tool: params.tool } : {});
      return { captured };
    },
    { check: checkBeforeEdit },
  );

  server.registerRequest<TurnEndedParams, TurnEndedResult>(
    'harness/turnEnded',
    async (params) => {
      const session = sessions.require(params.channel);
      const summary = await session.endTurn(params.turnId, params.state !== undefined ? { state: params.state } : {});
      await afterTurnEnded?.()?.(session.uri, params.turnId);
      return { summary };
    },
    { check: checkTurnEnded },
  );

  registerPresentFiles(server, sessions, presented);

  server.registerRequest<StatusParams | undefined, StatusResult>(
    'harness/status',
    async (params) => {
      const limit = params?.turns ?? DEFAULT_STATUS_TURNS;
      const list = params?.channel !== undefined ? [sessions.require(params.channel)] : sessions.list();
      return { sessions: await Promise.all(list.map((s) => sessionStatusOf(s, limit))) };
    },
    { check: checkStatus },
  );
}
