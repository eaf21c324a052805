import type { StateAction } from '../../protocol/index.js';

/**
 * Params check for a method, as a message naming the offending field.
 * Interim: checks the `channel` routing key every AHP params object carries.
 */
export function checkParams(method: string, params: unknown): string | undefined {
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return `${method}: params must be an object`;
  const channel = (params as { channel?: unknown }).channel;
  if (typeof channel !== 'string' || channel.length === 0) return 'params.channel must be a non-empty string';
  return undefined;
}

/** Payload check of a client-dispatched action, as a message naming the offending field. */
export function checkAction(action: StateAction): string | undefined {
  const a = action as unknown as { files?: unknown; reviewed?: unknown };
  if (!Array.isArray(a.files) || a.files.some((f) => typeof f !== 'string')) return 'action.files must be an array of strings';
  if (typeof a.reviewed !== 'boolean') return 'action.reviewed must be a boolean';
  return undefined;
}
