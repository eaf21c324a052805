/** Validators for root channel commands. */

import type { ListSessionsParams } from '../root/commands.js';
import { nonEmptyString, object, optional, positiveInteger, run } from './checks.js';
import type { Validation } from './checks.js';
import { rootChannel } from './common.js';

const listSessionsParams = object({
  channel: rootChannel,
  limit: optional(positiveInteger),
  cursor: optional(nonEmptyString),
});

/** Checks `listSessions` params (the cursor's meaning is the server's to check). */
export function validateListSessionsParams(params: unknown): Validation<ListSessionsParams> {
  return run(listSessionsParams, params, 'params');
}
