/**
 * Changeset URIs: `ahp-changeset:/<session>/<kind>[/<variables>]`, with an
 * optional `/dir/<n>` scope for one working directory of a multi-root
 * session. Templates are RFC 6570 (expanded with `url-template`); parsing is
 * strict: every variable present and non-empty, no extra segments, and
 * percent-decoding that round-trips any turn id.
 */
import { parseTemplate } from 'url-template';
import { CHANGESET_PREFIX } from '../common/channels.js';

/** The kinds of changeset this server produces. */
export type ChangesetKindName = 'session' | 'turn' | 'compare-turns' | 'uncommitted' | 'branch' | 'step' | 'since';

/** A changeset URI taken apart. */
export interface ParsedChangesetUri {
  /** Id of the owning session (the path of `ahp-session:/<id>`). */
  sessionId: string;
  /** Which changeset. */
  kind: ChangesetKindName;
  /** Working-directory index for per-directory changesets; absent for the combined ones. */
  dir?: number;
  /** For `turn`: the turn id. */
  turnId?: string;
  /** For `compare-turns`: the turn whose end state is the old side. */
  originalTurnId?: string;
  /** For `compare-turns`: the turn whose end state is the new side. */
  modifiedTurnId?: string;
  /** For `step` and `since`: the 1-based step of `turnId`; absent for `since` a turn's start (`start` in the URI). */
  step?: number;
}

/** Why a URI is not a changeset URI we could serve. */
export interface ChangesetUriError {
  /** Human-readable reason naming what is wrong. */
  message: string;
}

const KIND_SEGMENTS: Record<ChangesetKindName, { segment: string; variables: readonly string[] }> = {
  session: { segment: 'session', variables: [] },
  turn: { segment: 'turn', variables: ['turnId'] },
  'compare-turns': { segment: 'compare', variables: ['originalTurnId', 'modifiedTurnId'] },
  uncommitted: { segment: 'uncommitted', variables: [] },
  branch: { segment: 'branch', variables: [] },
  step: { segment: 'step', variables: ['turnId', 'step'] },
  since: { segment: 'since', variables: ['turnId', 'step'] },
};

/** The `{step}` value of a `since` changeset that starts at the turn's start. */
export const SINCE_TURN_START = 'start';

/** The URI template of one changeset kind of a session, optionally scoped to one working directory. */
export function changesetUriTemplate(sessionId: string, kind: ChangesetKindName, dir?: number): string {
  const spec = KIND_SEGMENTS[kind];
  const scope = dir === undefined ? '' : `/dir/${dir}`;
  return `${CHANGESET_PREFIX}${encodeURIComponent(sessionId)}${scope}/${spec.segment}${spec.variables.map((v) => `/{${v}}`).join('')}`;
}

/** Expands a changeset URI template with variable values. */
export function expandChangesetUri(template: string, variables: Record<string, string> = {}): string {
  return parseTemplate(template).expand(variables);
}

/** The concrete URI of a parsed changeset. */
export function formatChangesetUri(parsed: ParsedChangesetUri): string {
  const values: Record<string, string> = {};
  for (const key of ['turnId', 'originalTurnId', 'modifiedTurnId'] as const) {
    const value = parsed[key];
    if (value !== undefined) values[key] = value;
  }
  if (parsed.step !== undefined) values['step'] = String(parsed.step);
  else if (parsed.kind === 'since') values['step'] = SINCE_TURN_START;
  return expandChangesetUri(changesetUriTemplate(parsed.sessionId, parsed.kind, parsed.dir), values);
}

/** Parses a changeset URI strictly; returns the parts or what is wrong. */
export function parseChangesetUri(uri: string): ParsedChangesetUri | ChangesetUriError {
  if (typeof uri !== 'string' || !uri.startsWith(CHANGESET_PREFIX)) return { message: `not an ${CHANGESET_PREFIX} URI` };
  const rest = uri.slice(CHANGESET_PREFIX.length);
  if (/[?#]/.test(rest)) return { message: 'changeset URIs take no query or fragment' };
  if (/[{}]/.test(rest)) return { message: 'a URI cannot contain "{" or "}": expand the template\'s variables first' };
  const raw = rest.split('/');
  const segments: string[] = [];
  for (const s of raw) {
    try {
      segments.push(decodeURIComponent(s));
    } catch {
      return { message: `malformed percent-encoding in "${s}"` };
    }
  }
  const [sessionId, ...tail] = segments;
  if (!sessionId) return { message: 'missing session id' };
  let dir: number | undefined;
  if (tail[0] === 'dir') {
    const n = raw[2];
    if (n === undefined || !/^(0|[1-9]\d{0,3})$/.test(n)) return { message: 'dir must be followed by a working-directory index' };
    dir = Number(n);
    tail.splice(0, 2);
  }
  const [segment, ...values] = tail;
  const kind = (Object.keys(KIND_SEGMENTS) as ChangesetKindName[]).find((k) => KIND_SEGMENTS[k].segment === segment);
  if (!kind) return { message: `unknown changeset kind ${JSON.stringify(segment ?? '')}` };
  const variables = KIND_SEGMENTS[kind].variables;
  if (values.length !== variables.length) {
    return {
      message: `a ${kind} changeset URI takes ${variables.length === 0 ? 'no' : variables.join(' and ')} segment${variables.length === 1 ? '' : 's'} after "${segment}"`,
    };
  }
  const parsed: ParsedChangesetUri = { sessionId, kind };
  if (dir !== undefined) parsed.dir = dir;
  for (let i = 0; i < variables.length; i++) {
    const value = values[i]!;
    if (value.length === 0) return { message: `${variables[i]} must not be empty` };
    if (variables[i] === 'step') {
      if (kind === 'since' && value === SINCE_TURN_START) continue;
      if (!/^[1-9]\d{0,5}$/.test(value)) {
        return { message: `step must be a step number from 1 to 999999${kind === 'since' ? ` or "${SINCE_TURN_START}"` : ''}, got ${JSON.stringify(value)}` };
      }
      parsed.step = Number(value);
      continue;
    }
    (parsed as unknown as Record<string, string>)[variables[i]!] = value;
  }
  return parsed;
}

/** True when `parseChangesetUri` failed. */
export function isChangesetUriError(value: ParsedChangesetUri | ChangesetUriError): value is ChangesetUriError {
  return 'message' in value;
}
