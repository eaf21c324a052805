/** Validators for changeset commands and the client-dispatchable changeset action. */

import type { ChangesetFilesReviewChangedAction } from '../changeset/actions.js';
import type { ChangesetOperationTarget, InvokeChangesetOperationParams } from '../changeset/commands.js';
import type { TextPosition } from '../common/state.js';
import {
  all,
  arrayOf,
  boolean,
  channel,
  discriminated,
  isObject,
  nonEmptyString,
  nonNegativeInteger,
  object,
  oneOf,
  optional,
  overlongUriComponent,
  run,
} from './checks.js';
import type { Check, Validation } from './checks.js';

const position = object({ line: nonNegativeInteger, character: nonNegativeInteger });

/** Whether position `a` comes after `b`. */
function after(a: TextPosition, b: TextPosition): boolean {
  return a.line > b.line || (a.line === b.line && a.character > b.character);
}

const ordered: Check = (value, path) => {
  const range = value as { start: TextPosition; end: TextPosition };
  return after(range.start, range.end) ? `${path}.end must not come before ${path}.start` : undefined;
};

/** A {@link TextRange}: two positions, end not before start. */
export const textRange: Check = all(object({ start: position, end: position }), ordered);

const side = optional(oneOf('before', 'after'));

/** A file's id in a changeset (its URI): no path component longer than a file name can be. */
const resource: Check = (value, path) => nonEmptyString(value, path) ?? overlongUriComponent(value as string, path);

/** A {@link ChangesetOperationTarget}: `resource` or `range`. */
export const changesetOperationTarget: Check = discriminated('kind', {
  resource: object({ resource, side }),
  range: object({ resource, side, range: textRange }),
});

/** Checks one operation target on its own (e.g. a stored or round-tripped one). */
export function validateChangesetOperationTarget(target: unknown, path = 'target'): Validation<ChangesetOperationTarget> {
  return run(changesetOperationTarget, target, path);
}

const invokeParams = object({
  channel: channel('changeset'),
  operationId: nonEmptyString,
  target: optional(changesetOperationTarget),
});

/** Checks `invokeChangesetOperation` params (whether the operation exists is the server's to check). */
export function validateInvokeChangesetOperationParams(params: unknown): Validation<InvokeChangesetOperationParams> {
  return run(invokeParams, params, 'params');
}

const filesReviewChanged = object({
  type: oneOf('changeset/filesReviewChanged'),
  files: arrayOf(nonEmptyString, { nonEmpty: true }),
  reviewed: boolean,
});

/** Checks a `changeset/filesReviewChanged` payload. */
export function validateFilesReviewChangedAction(action: unknown, path = 'action'): Validation<ChangesetFilesReviewChangedAction> {
  return run(filesReviewChanged, action, path);
}

/** Whether `value` looks like an action object (an object with a string `type`). */
export function hasActionType(value: unknown): value is { type: string } {
  return isObject(value) && typeof value['type'] === 'string';
}
