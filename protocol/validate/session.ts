/** Validators for session channel commands. */

import type { CreateSessionParams, DisposeSessionParams } from '../session/commands.js';
import { anyObject, arrayOf, boundedId, channel, fileUri, nonEmptyString, object, optional, run, sessionChannel, string } from './checks.js';
import type { Validation } from './checks.js';

const createSessionParams = object({
  channel: sessionChannel,
  provider: optional(nonEmptyString),
  workingDirectory: optional(fileUri),
  fork: optional(object({ session: channel('session'), turnId: boundedId })),
  config: optional(anyObject),
  activeClient: optional(
    object({
      clientId: nonEmptyString,
      displayName: optional(string),
      tools: arrayOf(anyObject),
      customizations: optional(arrayOf(anyObject)),
    }),
  ),
  progressToken: optional(nonEmptyString),
});

/** Checks `createSession` params. */
export function validateCreateSessionParams(params: unknown): Validation<CreateSessionParams> {
  return run(createSessionParams, params, 'params');
}

const disposeSessionParams = object({ channel: channel('session') });

/** Checks `disposeSession` params. */
export function validateDisposeSessionParams(params: unknown): Validation<DisposeSessionParams> {
  return run(disposeSessionParams, params, 'params');
}
