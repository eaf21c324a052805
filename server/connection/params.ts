import { validateParams } from '../../protocol/index.js';

/**
 * Default params check: the protocol validator for methods it knows; for
 * other methods (extensions registered without their own check) the AHP
 * rule that params are an object carrying a `channel` URI.
 * Returns a message naming the offending field, or undefined.
 */
export function checkParams(method: string, params: unknown): string | undefined {
  const result = validateParams(method, params);
  if (result) return result.ok ? undefined : result.message;
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return 'params must be an object';
  const channel = (params as { channel?: unknown }).channel;
  if (typeof channel !== 'string' || channel.length === 0) return 'params.channel must be a non-empty string';
  return undefined;
}
