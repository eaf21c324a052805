/** Validators for session channel commands. */

import type { SessionIsArchivedChangedAction } from '../session/actions.js';
import type { CreateSessionParams, DisposeSessionParams } from '../session/commands.js';
import { anyObject, arrayOf, boolean, boundedId, channel, fileUri, nonEmptyString, object, oneOf, optional, run, sessionChannel, string } from './checks.js';
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

const isArchivedChanged = object({ type: oneOf('session/isArchivedChanged'), isArchived: boolean });

/** Checks a `session/isArchivedChanged` payload (a client archiving or unarchiving a session). */
export function validateIsArchivedChangedAction(action: unknown, path = 'action'): Validation<SessionIsArchivedChangedAction> {
  return run(isArchivedChanged, action, path);
}
