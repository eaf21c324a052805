import { parseChannel } from '../../protocol/index.js';
import type { MethodTable } from '../method-table.js';
import type { SessionManager } from './session-manager.js';

/**
 * `forgetSession`: removes a session and its history from the stores for
 * good (`changeset-server forget`). Ending a session keeps its history;
 * this is how a user lets it go before retention does.
 */
export function sessionMethods(sessions: SessionManager): MethodTable {
  return {
    forgetSession: {
      request: async (params) => {
        sessions.require(params.channel);
        await sessions.forget(params.channel);
        return null;
      },
      check: checkForgetParams,
    },
  };
}

function checkForgetParams(params: unknown): string | undefined {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return 'params must be an object';
  const channel = (params as Record<string, unknown>)['channel'];
  if (typeof channel !== 'string' || parseChannel(channel)?.kind !== 'session') return 'params.channel must be an ahp-session:/<id> URI';
  return undefined;
}
