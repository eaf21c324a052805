/**
 * A tiny set of composable checks for inbound JSON. A check looks at one value
 * at a path (e.g. `params.target.range`) and returns the first problem as a
 * sentence naming that path, or `undefined` when the value is acceptable.
 * Unknown object keys are always allowed: receivers ignore them.
 */

import { channelKindOf, parseChannel } from '../common/channels.js';
import type { ChannelKind } from '../common/channel-state.js';

/** Returns a message naming `path` when `value` is unacceptable, else `undefined`. */
export type Check = (value: unknown, path: string) => string | undefined;

/** The outcome of validating an inbound message part. */
export type Validation<T> = { ok: true; value: T } | { ok: false; message: string };

/** Runs `check` on `value` at `path` and wraps the outcome; the value is passed through untouched. */
export function run<T>(check: Check, value: unknown, path: string): Validation<T> {
  const message = check(value, path);
  return message === undefined ? { ok: true, value: value as T } : { ok: false, message };
}

/** Whether `value` is a plain JSON object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A string with at least one character. */
export const nonEmptyString: Check = (value, path) => (typeof value === 'string' && value.length > 0 ? undefined : `${path} must be a non-empty string`);

/** Any string, including the empty one. */
export const string: Check = (value, path) => (typeof value === 'string' ? undefined : `${path} must be a string`);

/** `true` or `false`. */
export const boolean: Check = (value, path) => (typeof value === 'boolean' ? undefined : `${path} must be a boolean`);

/** A safe integer ≥ 0. */
export const nonNegativeInteger: Check = (value, path) =>
  Number.isSafeInteger(value) && (value as number) >= 0 ? undefined : `${path} must be a non-negative integer`;

/** A safe integer ≥ 1. */
export const positiveInteger: Check = (value, path) =>
  Number.isSafeInteger(value) && (value as number) >= 1 ? undefined : `${path} must be a positive integer`;

/** A finite number ≥ 0. */
export const nonNegativeNumber: Check = (value, path) =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? undefined : `${path} must be a non-negative number`;

/** Any JSON object, contents unchecked. */
export const anyObject: Check = (value, path) => (isObject(value) ? undefined : `${path} must be an object`);

/** Exactly one of the given string values. */
export function oneOf(...allowed: readonly string[]): Check {
  const list = allowed.map((a) => JSON.stringify(a)).join(', ');
  return (value, path) =>
    typeof value === 'string' && allowed.includes(value) ? undefined : allowed.length === 1 ? `${path} must be ${list}` : `${path} must be one of ${list}`;
}

/** Longest id (session, turn) accepted, in characters: ids end up in ref names and commit trailers. */
export const MAX_ID_LENGTH = 1024;

/** Longest file name, in bytes, the file systems we run on accept (NAME_MAX). */
export const MAX_NAME_BYTES = 255;

/** A non-empty id of at most {@link MAX_ID_LENGTH} characters. */
export const boundedId: Check = (value, path) =>
  nonEmptyString(value, path) ?? ((value as string).length > MAX_ID_LENGTH ? `${path} must be at most ${MAX_ID_LENGTH} characters` : undefined);

const utf8 = new TextEncoder();

/** Bytes a URI path component stands for: each `%XX` is one byte, anything else its UTF-8. */
function uriComponentBytes(component: string): number {
  let bytes = 0;
  for (const part of component.split(/(%[0-9A-Fa-f]{2})/)) bytes += part.startsWith('%') && part.length === 3 ? 1 : utf8.encode(part).length;
  return bytes;
}

/** The problem with a URI whose path has a component over {@link MAX_NAME_BYTES} bytes, else `undefined`. */
export function overlongUriComponent(uri: string, path: string): string | undefined {
  const pathPart = uri.replace(/^[a-z][a-z0-9+.-]*:(\/\/[^/]*)?/i, '').split(/[?#]/, 1)[0]!;
  return pathPart.split('/').some((c) => uriComponentBytes(c) > MAX_NAME_BYTES)
    ? `${path} has a path component longer than ${MAX_NAME_BYTES} bytes`
    : undefined;
}

/** A `file:` URI, no path component longer than a file name can be. */
export const fileUri: Check = (value, path) =>
  typeof value === 'string' && value.startsWith('file:') && value.length > 'file:'.length ? overlongUriComponent(value, path) : `${path} must be a file: URI`;

/**
 * The problem with a URI that still holds `{` or `}`, else `undefined`: no
 * URI contains them (RFC 3986), so it is a template whose variables were
 * never expanded, like a catalogue entry's `uriTemplate` sent as is.
 */
export function unexpandedTemplate(uri: string, path: string): string | undefined {
  return /[{}]/.test(uri) ? `${path} must be a URI, not a template: expand its variables ("${uri.match(/\{[^}]*\}?/)?.[0] ?? '}'}") first` : undefined;
}

/** A non-empty URI string: not a template with unexpanded variables. */
export const uriString: Check = (value, path) => nonEmptyString(value, path) ?? unexpandedTemplate(value as string, path);

const channelNames: Record<ChannelKind, string> = {
  root: 'ahp-root://',
  session: 'ahp-session:/<id>',
  chat: 'ahp-chat:/<id>',
  changeset: 'ahp-changeset:/<id>',
};

/** A channel URI of one of the given kinds (any kind we serve when none are given). */
export function channel(...kinds: ChannelKind[]): Check {
  const accepted = kinds.length > 0 ? kinds : (Object.keys(channelNames) as ChannelKind[]);
  const names = accepted.map((k) => channelNames[k]);
  const expectation = names.length === 1 ? `an ${names[0]} URI` : `one of ${names.join(', ')}`;
  return (value, path) => {
    const missing = nonEmptyString(value, path) ?? unexpandedTemplate(value as string, path);
    if (missing) return missing;
    const kind = channelKindOf(value as string);
    return kind !== undefined && accepted.includes(kind) ? undefined : `${path} must be ${expectation}`;
  };
}

/** A session channel URI whose id is at most {@link MAX_ID_LENGTH} characters. */
export const sessionChannel: Check = (value, path) => {
  const problem = channel('session')(value, path);
  if (problem) return problem;
  return parseChannel(value as string)!.id.length > MAX_ID_LENGTH ? `${path} must name a session id of at most ${MAX_ID_LENGTH} characters` : undefined;
};

/** An array whose every item passes `item`; `nonEmpty` also rejects `[]`. */
export function arrayOf(item: Check, options: { nonEmpty?: boolean } = {}): Check {
  return (value, path) => {
    if (!Array.isArray(value)) return `${path} must be ${options.nonEmpty ? 'a non-empty array' : 'an array'}`;
    if (options.nonEmpty && value.length === 0) return `${path} must be a non-empty array`;
    for (let i = 0; i < value.length; i++) {
      const problem = item(value[i], `${path}[${i}]`);
      if (problem) return problem;
    }
    return undefined;
  };
}

/** A field that may be absent (or `undefined`); when present it must pass `check`. */
export interface OptionalField {
  /** Marks the field optional. */
  readonly optional: true;
  /** The check applied when the field is present. */
  readonly check: Check;
}

/** Marks an object field as optional. */
export function optional(check: Check): OptionalField {
  return { optional: true, check };
}

/** Field checks of an object, keyed by field name; fields not listed are allowed and unchecked. */
export type Shape = Record<string, Check | OptionalField>;

/** An object whose listed fields pass their checks, in declaration order; extra keys are allowed. */
export function object(shape: Shape): Check {
  return (value, path) => {
    if (!isObject(value)) return `${path} must be an object`;
    for (const [key, field] of Object.entries(shape)) {
      const fieldPath = `${path}.${key}`;
      const fieldValue = value[key];
      if (typeof field === 'function') {
        const problem = field(fieldValue, fieldPath);
        if (problem) return problem;
      } else if (fieldValue !== undefined) {
        const problem = field.check(fieldValue, fieldPath);
        if (problem) return problem;
      }
    }
    return undefined;
  };
}

/** Runs checks in order and reports the first problem. */
export function all(...checks: Check[]): Check {
  return (value, path) => {
    for (const check of checks) {
      const problem = check(value, path);
      if (problem) return problem;
    }
    return undefined;
  };
}

/**
 * An object discriminated by `key`: the value must be one of the listed
 * variants, and then pass that variant's check.
 */
export function discriminated(key: string, variants: Record<string, Check>): Check {
  const kinds = Object.keys(variants);
  const kindCheck = oneOf(...kinds);
  return (value, path) => {
    if (!isObject(value)) return `${path} must be an object`;
    const problem = kindCheck(value[key], `${path}.${key}`);
    if (problem) return problem;
    return variants[value[key] as string]?.(value, path);
  };
}

/** The first problem with the `{ session, path }` params of a method about one file of a session, or undefined. */
export function sessionFileParamsProblem(params: unknown): string | undefined {
  if (!isObject(params)) return 'params must be an object';
  const session = sessionChannel(params['session'], 'params.session');
  if (session !== undefined) return session;
  const path = params['path'];
  if (typeof path !== 'string' || path.length === 0) return 'params.path must be a non-empty string';
  if (path.length > 4096) return 'params.path must be at most 4096 characters';
  return undefined;
}
