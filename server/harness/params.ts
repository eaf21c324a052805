/** Params of `harness/turnStarted`. */
export interface TurnStartedParams {
  /** The session URI. */
  channel: string;
  /** Turn id to use; the server picks one when omitted. */
  turnId?: string;
  /** The prompt or description of the turn. */
  message?: string;
}

/** Params of `harness/beforeEdit`. */
export interface BeforeEditParams {
  /** The session URI. */
  channel: string;
  /** The active turn's id. */
  turnId: string;
  /** Paths a tool is about to write: absolute, or relative to the session's first working directory. */
  paths: string[];
  /** Name of the tool, recorded on the turn's change entries. */
  tool?: string;
}

/** Params of `harness/turnEnded`. */
export interface TurnEndedParams {
  /** The session URI. */
  channel: string;
  /** The active turn's id. */
  turnId: string;
  /** How the turn ended (default `complete`). */
  state?: 'complete' | 'cancelled' | 'error';
}

/** Params of `harness/status`. */
export interface StatusParams {
  /** Only this session; every live session when omitted. */
  channel?: string;
  /** Most recent turns listed per session (default 10, at most 1000). */
  turns?: number;
}

type Check = (params: unknown) => string | undefined;

function object(params: unknown): Record<string, unknown> | string {
  return typeof params === 'object' && params !== null && !Array.isArray(params) ? (params as Record<string, unknown>) : 'params must be an object';
}

function nonEmpty(p: Record<string, unknown>, key: string, optional = false): string | undefined {
  const v = p[key];
  if (v === undefined && optional) return undefined;
  return typeof v === 'string' && v.length > 0 ? undefined : `params.${key} must be a non-empty string`;
}

/** Checks `harness/turnStarted` params; returns the problem or undefined. */
export const checkTurnStarted: Check = (params) => {
  const p = object(params);
  if (typeof p === 'string') return p;
  if (p['message'] !== undefined && typeof p['message'] !== 'string') return 'params.message must be a string';
  return nonEmpty(p, 'channel') ?? nonEmpty(p, 'turnId', true);
};

/** Checks `harness/beforeEdit` params; returns the problem or undefined. */
export const checkBeforeEdit: Check = (params) => {
  const p = object(params);
  if (typeof p === 'string') return p;
  const basic = nonEmpty(p, 'channel') ?? nonEmpty(p, 'turnId') ?? nonEmpty(p, 'tool', true);
  if (basic) return basic;
  const paths = p['paths'];
  if (!Array.isArray(paths) || paths.length === 0) return 'params.paths must be a non-empty array of strings';
  const bad = paths.findIndex((x) => typeof x !== 'string' || x.length === 0 || x.includes('\0'));
  return bad >= 0 ? `params.paths[${bad}] must be a non-empty path` : undefined;
};

/** Checks `harness/turnEnded` params; returns the problem or undefined. */
export const checkTurnEnded: Check = (params) => {
  const p = object(params);
  if (typeof p === 'string') return p;
  const basic = nonEmpty(p, 'channel') ?? nonEmpty(p, 'turnId');
  if (basic) return basic;
  const state = p['state'];
  if (state !== undefined && state !== 'complete' && state !== 'cancelled' && state !== 'error') {
    return 'params.state must be one of complete, cancelled, error';
  }
  return undefined;
};

/** Checks `harness/status` params (which may be omitted); returns the problem or undefined. */
export const checkStatus: Check = (params) => {
  if (params === undefined || params === null) return undefined;
  const p = object(params);
  if (typeof p === 'string') return p;
  const channel = nonEmpty(p, 'channel', true);
  if (channel) return channel;
  const turns = p['turns'];
  if (turns !== undefined && (!Number.isInteger(turns) || (turns as number) < 0 || (turns as number) > 1000)) {
    return 'params.turns must be an integer from 0 to 1000';
  }
  return undefined;
};
