import type { ParamsCheck } from '../method-table.js';
import { MAX_ID_LENGTH, MAX_NAME_BYTES } from '../../protocol/validate/checks.js';
import { encodePathBytes } from '../path-bytes.js';
import { MAX_DESCRIPTION_LENGTH, MAX_PRESENTED_PER_CALL } from '../session/presented-files.js';

type Check = ParamsCheck;

/** Longest path, in bytes, the file systems we run on accept (PATH_MAX). */
const MAX_PATH_BYTES = 4096;

function object(params: unknown): Record<string, unknown> | string {
  return typeof params === 'object' && params !== null && !Array.isArray(params) ? (params as Record<string, unknown>) : 'params must be an object';
}

function nonEmpty(p: Record<string, unknown>, key: string, optional = false): string | undefined {
  const v = p[key];
  if (v === undefined && optional) return undefined;
  return typeof v === 'string' && v.length > 0 ? undefined : `params.${key} must be a non-empty string`;
}

/** A turn id: non-empty, at most {@link MAX_ID_LENGTH} characters (ids become ref names and commit trailers). */
function turnId(p: Record<string, unknown>, optional = false): string | undefined {
  const problem = nonEmpty(p, 'turnId', optional);
  if (problem || p['turnId'] === undefined) return problem;
  return (p['turnId'] as string).length > MAX_ID_LENGTH ? `params.turnId must be at most ${MAX_ID_LENGTH} characters` : undefined;
}

/** A path no file system could hold: a component over {@link MAX_NAME_BYTES} bytes, or the whole over {@link MAX_PATH_BYTES}. */
function overlongPath(path: string, field: string): string | undefined {
  const bytes = encodePathBytes(path);
  if (bytes.length > MAX_PATH_BYTES) return `${field} is longer than ${MAX_PATH_BYTES} bytes`;
  let start = 0;
  for (let i = 0; i <= bytes.length; i++) {
    if (i < bytes.length && bytes[i] !== 0x2f) continue;
    if (i - start > MAX_NAME_BYTES) return `${field} has a path component longer than ${MAX_NAME_BYTES} bytes`;
    start = i + 1;
  }
  return undefined;
}

/** Checks `harness/turnStarted` params; returns the problem or undefined. */
export const checkTurnStarted: Check = (params) => {
  const p = object(params);
  if (typeof p === 'string') return p;
  if (p['message'] !== undefined && typeof p['message'] !== 'string') return 'params.message must be a string';
  return nonEmpty(p, 'channel') ?? turnId(p, true) ?? nonEmpty(p, 'progressToken', true);
};

/** Checks `harness/beforeEdit` params; returns the problem or undefined. */
export const checkBeforeEdit: Check = (params) => {
  const p = object(params);
  if (typeof p === 'string') return p;
  const basic = nonEmpty(p, 'channel') ?? turnId(p) ?? nonEmpty(p, 'tool', true);
  if (basic) return basic;
  const paths = p['paths'];
  // Empty for a tool call that names no file (a shell command): a step checkpoint only.
  if (!Array.isArray(paths)) return 'params.paths must be an array of strings';
  const bad = paths.findIndex((x) => typeof x !== 'string' || x.length === 0 || x.includes('\0'));
  if (bad >= 0) return `params.paths[${bad}] must be a non-empty path`;
  for (let i = 0; i < paths.length; i++) {
    const problem = overlongPath(paths[i] as string, `params.paths[${i}]`);
    if (problem) return problem;
  }
  return undefined;
};

/** Checks `harness/presentFiles` params; returns the problem or undefined. */
export const checkPresentFiles: Check = (params) => {
  const p = object(params);
  if (typeof p === 'string') return p;
  const basic = nonEmpty(p, 'channel') ?? turnId(p);
  if (basic) return basic;
  const files = p['files'];
  if (!Array.isArray(files) || files.length === 0) return 'params.files must be a non-empty array of {path, description?}';
  if (files.length > MAX_PRESENTED_PER_CALL) return `params.files must have at most ${MAX_PRESENTED_PER_CALL} entries`;
  for (let i = 0; i < files.length; i++) {
    const f: unknown = files[i];
    const field = `params.files[${i}]`;
    if (typeof f !== 'object' || f === null || Array.isArray(f)) return `${field} must be an object {path, description?}`;
    const { path, description } = f as Record<string, unknown>;
    if (typeof path !== 'string' || path.length === 0 || path.includes('\0')) return `${field}.path must be a non-empty path`;
    const long = overlongPath(path, `${field}.path`);
    if (long) return long;
    if (description !== undefined && typeof description !== 'string') return `${field}.description must be a string`;
    if (typeof description === 'string' && description.length > MAX_DESCRIPTION_LENGTH)
      return `${field}.description must be at most ${MAX_DESCRIPTION_LENGTH} characters`;
  }
  return undefined;
};

/** Checks `harness/turnEnded` params; returns the problem or undefined. */
export const checkTurnEnded: Check = (params) => {
  const p = object(params);
  if (typeof p === 'string') return p;
  const basic = nonEmpty(p, 'channel') ?? turnId(p);
  if (basic) return basic;
  const state = p['state'];
  if (state !== undefined && state !== 'complete' && state !== 'cancelled' && state !== 'error') {
    return 'params.state must be one of complete, cancelled, error';
  }
  return undefined;
};

/** Checks `harness/sessionEnded` params; returns the problem or undefined. */
export const checkSessionEnded: Check = (params) => {
  const p = object(params);
  if (typeof p === 'string') return p;
  return nonEmpty(p, 'channel');
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
