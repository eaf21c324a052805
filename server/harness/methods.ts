import { ROOT_CHANNEL } from '../../protocol/index.js';
import type { Disposable } from '../events.js';
import type { RecordingSession } from '../session/recording-session.js';
import type { SessionManager } from '../session/session-manager.js';
import type { Caller, MethodTable } from '../method-table.js';
import { checkBeforeEdit, checkSessionEnded, checkStatus, checkTurnEnded, checkTurnStarted } from './params.js';
import { presentFilesMethods } from './present-files.js';
import { DEFAULT_STATUS_TURNS, sessionStatusOf } from './status.js';

/** Optional hook run after a turn has ended and before `harness/turnEnded` answers (changesets update there). */
export type AfterTurnEnded = (sessionUri: string, turnId: string) => Promise<void>;

/**
 * The harness methods an agent in another process uses to record turns:
 * `harness/turnStarted`, `harness/beforeEdit`, `harness/turnEnded`,
 * `harness/presentFiles`, `harness/sessionEnded` when the agent's session
 * ends, and `harness/status` to see what is being
 * recorded. `afterTurnEnded` is a step (changesets updating) that runs
 * before `turnEnded` answers.
 */
export function harnessMethods(sessions: SessionManager, afterTurnEnded?: AfterTurnEnded): MethodTable {
  return {
    'harness/turnStarted': {
      request: async (params, caller) => {
        const session = sessions.require(params.channel);
        sessions.turnRequested(session);
        // A turn requested while the first snapshot is read waits for it, and says so to a client that asked.
        const waiting = params.progressToken !== undefined ? reportStartWait(session, params.progressToken, caller) : undefined;
        try {
          const turn = await session.startTurn({
            ...(params.turnId !== undefined ? { id: params.turnId } : {}),
            ...(params.message !== undefined ? { message: params.message } : {}),
          });
          return { turnId: turn.id, chat: session.chatUri };
        } finally {
          waiting?.dispose();
        }
      },
      check: checkTurnStarted,
    },
    'harness/beforeEdit': {
      request: async (params) => {
        const session = sessions.require(params.channel);
        const captured = await session.beforeEdit(params.turnId, params.paths, params.tool !== undefined ? { tool: params.tool } : {});
        return { captured };
      },
      check: checkBeforeEdit,
    },
    'harness/turnEnded': {
      request: async (params) => {
        const session = sessions.require(params.channel);
        const summary = await session.endTurn(params.turnId, params.state !== undefined ? { state: params.state } : {});
        await afterTurnEnded?.(session.uri, params.turnId);
        return { summary };
      },
      check: checkTurnEnded,
    },
    'harness/sessionEnded': {
      request: async (params) => {
        // The agent's session ended: recording stops, the history stays (AHP's disposeSession removes it).
        await sessions.dispose(sessions.require(params.channel).uri);
        return null;
      },
      check: checkSessionEnded,
    },
    ...presentFilesMethods(sessions),
    'harness/status': {
      request: async (params) => {
        const limit = params?.turns ?? DEFAULT_STATUS_TURNS;
        const list = params?.channel !== undefined ? [sessions.require(params.channel)] : sessions.list();
        return { sessions: await Promise.all(list.map((s) => sessionStatusOf(s, limit))) };
      },
      check: checkStatus,
    },
  };
}

const COUNT = new Intl.NumberFormat('en-US');

/**
 * While a session's first snapshot is being read, `root/progress` frames
 * with the caller's token: one at once, one per progress report, and the
 * final one (`progress === total`) when the wait is over. Nothing when the
 * session is not preparing.
 */
function reportStartWait(session: RecordingSession, progressToken: string, caller: Caller): Disposable | undefined {
  const now = session.preparing;
  if (!now) return undefined;
  let progress = 0;
  const dirs = session.workingDirectories.join(', ');
  const send = (done: number, total: number | undefined, final = false): void => {
    progress = Math.max(progress, done);
    const ahead = total !== undefined && total > progress ? total : undefined;
    const count = `${COUNT.format(progress)}${ahead !== undefined ? ` of ${COUNT.format(ahead)}` : ''} files`;
    caller.notify('root/progress', {
      channel: ROOT_CHANNEL,
      progressToken,
      progress,
      ...(final ? { total: progress } : ahead !== undefined ? { total: ahead } : {}),
      message: final ? `Read ${dirs} (${count})` : `Reading ${dirs} before the turn starts: ${count} so far`,
    });
  };
  send(now.done, now.total);
  const listening = session.onStartProgress((p) => send(p.done, p.total));
  return {
    dispose: () => {
      listening.dispose();
      send(progress, undefined, true);
    },
  };
}
