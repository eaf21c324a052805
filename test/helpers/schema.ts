/**
 * Validates values and outbound JSON-RPC messages against the AHP 0.6 JSON
 * Schemas pinned in `test/fixtures/ahp/schema/` (draft 2020-12), with Ajv.
 *
 * The published schemas are generated from TypeScript and have a few defects
 * that would reject valid wire data; they are patched in memory (see
 * `patchSchema`), each patch named with the reason.
 */

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv2020Module from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';

/** The five AHP schema files. */
export type SchemaFile = 'state' | 'actions' | 'commands' | 'notifications' | 'errors';

const SCHEMA_FILES: readonly SchemaFile[] = ['state', 'actions', 'commands', 'notifications', 'errors'];

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const schemaDir = path.join(repoRoot, 'test/fixtures/ahp/schema');

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonSchema = { [key: string]: Json };

/**
 * Fields the TypeScript source declares as `T | undefined` without `?`: the
 * generator lists them as required, but the wire omits them when undefined
 * (round-trip fixture 025: a server-originated envelope has no `origin`).
 */
const REQUIRED_BUT_OMITTABLE: Record<string, string[]> = {
  ActionEnvelope: ['origin'],
  Turn: ['usage'],
  ActiveTurn: ['usage'],
  SessionActivityChangedAction: ['activity'],
  SessionChangesetsChangedAction: ['changesets'],
  SessionMetaChangedAction: ['_meta'],
  ChangesetOperationsChangedAction: ['operations'],
};

/** Recursively renames `oneOf` to `anyOf`. */
function oneOfToAnyOf(node: Json): Json {
  if (Array.isArray(node)) return node.map(oneOfToAnyOf);
  if (node === null || typeof node !== 'object') return node;
  const out: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(node)) out[key === 'oneOf' ? 'anyOf' : key] = oneOfToAnyOf(value);
  return out;
}

/** Returns a patched copy of one schema file. */
function patchSchema(schema: JsonSchema): JsonSchema {
  // The generated unions have no exclusive discriminators (e.g. a `fork` ChatOrigin also
  // matches the `user` variant, a ChangesetState matches several Snapshot.state variants),
  // so `oneOf` rejects valid data; `anyOf` keeps the "one of these shapes" meaning.
  const patched = oneOfToAnyOf(schema) as JsonSchema;
  const defs = patched['$defs'] as { [name: string]: JsonSchema };

  for (const [name, fields] of Object.entries(REQUIRED_BUT_OMITTABLE)) {
    const def = defs[name];
    if (def && Array.isArray(def['required'])) {
      def['required'] = def['required'].filter((f) => typeof f !== 'string' || !fields.includes(f));
    }
  }

  // `StateAction` lists a dangling `{"$ref": "#/$defs/"}` variant that cannot resolve.
  const stateAction = defs['StateAction'];
  if (stateAction && Array.isArray(stateAction['anyOf'])) {
    stateAction['anyOf'] = stateAction['anyOf'].filter((v) => !(v !== null && typeof v === 'object' && !Array.isArray(v) && v['$ref'] === '#/$defs/'));
  }

  // `SessionStatus` is a bitset (e.g. Idle | IsRead = 33) but is generated as an enum of single values.
  if (defs['SessionStatus']) {
    defs['SessionStatus'] = { type: 'integer', minimum: 0, description: 'Status bitset' };
  }

  // `ChangesetOperationTarget.range` is generated as a string; the spec and round-trip
  // fixture 013 carry a TextRange, and `kind` discriminates the two variants.
  if (defs['ChangesetOperationTarget']) {
    const side = { enum: ['before', 'after'] };
    defs['ChangesetOperationTarget'] = {
      anyOf: [
        {
          type: 'object',
          properties: { kind: { const: 'resource' }, resource: { type: 'string' }, side },
          required: ['kind', 'resource'],
        },
        {
          type: 'object',
          properties: {
            kind: { const: 'range' },
            resource: { type: 'string' },
            side,
            range: { $ref: '#/$defs/TextRange' },
          },
          required: ['kind', 'resource', 'range'],
        },
      ],
    };
  }
  return patched;
}

interface Loaded {
  ajv: InstanceType<typeof Ajv2020Module.default>;
  ids: Record<SchemaFile, string>;
  defs: Record<SchemaFile, Set<string>>;
}

let loaded: Loaded | undefined;

function load(): Loaded {
  if (loaded) return loaded;
  const Ajv2020 = Ajv2020Module.default;
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
  const ids = {} as Record<SchemaFile, string>;
  const defs = {} as Record<SchemaFile, Set<string>>;
  for (const file of SCHEMA_FILES) {
    const raw = JSON.parse(readFileSync(path.join(schemaDir, `${file}.schema.json`), 'utf8')) as JsonSchema;
    const schema = patchSchema(raw);
    ids[file] = String(schema['$id']);
    defs[file] = new Set(Object.keys(schema['$defs'] as object));
    ajv.addSchema(schema);
  }
  loaded = { ajv, ids, defs };
  return loaded;
}

const compiled = new Map<string, ValidateFunction>();

function validatorFor(defName: string, schemaFile?: SchemaFile): ValidateFunction {
  const { ajv, ids, defs } = load();
  const file = schemaFile ?? SCHEMA_FILES.find((f) => defs[f].has(defName));
  if (!file || !defs[file].has(defName)) {
    throw new Error(`no schema definition ${defName}${schemaFile ? ` in ${schemaFile}.schema.json` : ''}`);
  }
  const ref = `${ids[file]}#/$defs/${defName}`;
  let validate = compiled.get(ref);
  if (!validate) {
    validate = ajv.getSchema(ref);
    if (!validate) throw new Error(`cannot compile ${ref}`);
    compiled.set(ref, validate);
  }
  return validate;
}

function describe(errors: ErrorObject[] | null | undefined, dataVar: string): string {
  return load().ajv.errorsText(errors, { dataVar, separator: '; ' });
}

/** Ajv's error text when `value` does not match `$defs/<defName>`, or `undefined` when it does. */
export function schemaErrors(defName: string, value: unknown, schemaFile?: SchemaFile): string | undefined {
  const validate = validatorFor(defName, schemaFile);
  return validate(value) ? undefined : describe(validate.errors, defName);
}

/** Throws with Ajv's error text unless `value` matches `$defs/<defName>` (first schema file that defines it, unless given). */
export function assertValid(defName: string, value: unknown, schemaFile?: SchemaFile): void {
  const problem = schemaErrors(defName, value, schemaFile);
  if (problem !== undefined) throw new Error(`${defName} schema violation: ${problem}\nvalue: ${JSON.stringify(value)}`);
}

/** The result definition of each request method we serve; `null` means the result is `null`. */
const RESULT_DEFS: Record<string, string | null> = {
  initialize: 'InitializeResult',
  subscribe: 'SubscribeResult',
  listSessions: 'ListSessionsResult',
  resourceRead: 'ResourceReadResult',
  invokeChangesetOperation: 'InvokeChangesetOperationResult',
  ping: null,
  createSession: null,
  disposeSession: null,
};

/** The params definition (and schema file) of each server notification. */
const NOTIFICATION_DEFS: Record<string, [string, SchemaFile]> = {
  action: ['ActionEnvelope', 'actions'],
  'root/sessionAdded': ['SessionAddedParams', 'notifications'],
  'root/sessionRemoved': ['SessionRemovedParams', 'notifications'],
  'root/sessionSummaryChanged': ['SessionSummaryChangedParams', 'notifications'],
  'root/progress': ['ProgressParams', 'notifications'],
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fail(message: string, value: unknown): never {
  throw new Error(`${message}\nmessage: ${JSON.stringify(value)}`);
}

/**
 * Checks one outbound JSON-RPC message. A success response is checked against
 * `<Method>Result` of `requestMethod` (required for responses), a notification
 * against its params definition (`action` → `ActionEnvelope`,
 * `root/sessionAdded` → `SessionAddedParams`, …), and an error response
 * against the JSON-RPC/AHP error codes.
 */
export function assertValidOutbound(message: unknown, requestMethod?: string): void {
  if (!isRecord(message)) fail('a JSON-RPC message must be an object', message);
  if (message['jsonrpc'] !== '2.0') fail('jsonrpc must be "2.0"', message);

  if (typeof message['method'] === 'string') {
    const method = message['method'];
    const def = NOTIFICATION_DEFS[method];
    if (!def) fail(`no schema for server notification ${method}`, message);
    if ('id' in message) fail(`${method} is a notification and must not carry an id`, message);
    assertValid(def[0], message['params'], def[1]);
    return;
  }

  const id = message['id'];
  if (!(typeof id === 'number' || typeof id === 'string' || ('error' in message && id === null))) {
    fail('a response must carry the request id', message);
  }

  if ('error' in message) {
    if ('result' in message) fail('a response carries either result or error', message);
    const error = message['error'];
    if (!isRecord(error) || typeof error['message'] !== 'string' || !Number.isInteger(error['code'])) {
      fail('error must be { code: integer, message: string, data? }', message);
    }
    const code = error['code'];
    if (schemaErrors('JsonRpcErrorCode', code, 'errors') !== undefined && schemaErrors('AhpErrorCode', code, 'errors') !== undefined) {
      fail(`error code ${String(code)} is neither a JSON-RPC nor an AHP error code`, message);
    }
    return;
  }

  if (!('result' in message)) fail('a response needs result or error', message);
  if (requestMethod === undefined) fail('checking a result needs the request method', message);
  const result = message['result'];
  if (requestMethod === 'reconnect') {
    const type = isRecord(result) ? result['type'] : undefined;
    if (type === 'replay' || type === 'snapshot') {
      assertValid(type === 'replay' ? 'ReconnectReplayResult' : 'ReconnectSnapshotResult', result, 'commands');
      return;
    }
    fail('reconnect result type must be "replay" or "snapshot"', message);
  }
  if (!(requestMethod in RESULT_DEFS)) fail(`no result schema for ${requestMethod}`, message);
  const def = RESULT_DEFS[requestMethod];
  if (def === null || def === undefined) {
    if (result !== null) fail(`${requestMethod} result must be null`, message);
    return;
  }
  assertValid(def, result, 'commands');
}
