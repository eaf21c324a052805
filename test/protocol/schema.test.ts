import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type {
  ActionEnvelope,
  ChangesetState,
  InitializeResult,
  SessionAddedParams,
  SessionState,
  SessionSummary,
  Snapshot,
  StateAction,
} from '../../protocol/index.js';
import {
  AHP_PROTOCOL_VERSION,
  AhpErrorCodes,
  JsonRpcErrorCodes,
  ROOT_CHANNEL,
  SessionStatus,
  validateChangesetOperationTarget,
} from '../../protocol/index.js';
import { reduce } from '../../reducers/index.js';
import { assertValid, assertValidOutbound, schemaErrors } from '../helpers/schema.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const roundTripDir = path.join(repoRoot, 'test/fixtures/ahp/test-cases/round-trips');

const changesetState: ChangesetState = {
  status: 'ready',
  files: [
    {
      id: 'file:///w/src/a.ts',
      edit: {
        before: { uri: 'file:///w/src/a.ts', content: 'ahp-content:/s1/blob/1111' },
        after: { uri: 'file:///w/src/a.ts', content: 'ahp-content:/s1/blob/2222' },
        diff: { added: 3, removed: 1 },
      },
      reviewed: true,
      _meta: { displayPath: 'src/a.ts', changeKind: 'modified' },
    },
  ],
  operations: [
    {
      id: 'revert-file',
      label: 'Revert File',
      scopes: ['resource', 'range'],
      confirmation: { markdown: 'Revert **a.ts**?' },
      status: 'error',
      error: { errorType: 'conflict', message: 'src/a.ts changed since the turn ended' },
    },
  ],
};

const sessionState: SessionState = {
  provider: 'claude-code',
  title: 'Fix the build',
  status: SessionStatus.Idle | SessionStatus.IsRead,
  lifecycle: 'ready',
  workingDirectory: 'file:///w',
  activeClients: [],
  chats: [
    {
      resource: 'ahp-chat:/c1',
      title: 'Chat',
      status: SessionStatus.Idle,
      modifiedAt: '2024-01-01T00:00:00.000Z',
      origin: { kind: 'fork', chat: 'ahp-chat:/c0', turnId: 't1' },
    },
  ],
  defaultChat: 'ahp-chat:/c1',
  changesets: [
    { label: 'Session Changes', uriTemplate: 'ahp-changeset:/s1/session', changeKind: 'session', capabilities: { review: {} } },
    { label: 'Turn', uriTemplate: 'ahp-changeset:/s1/turn/{turnId}', changeKind: 'turn' },
  ],
};

const serverEnvelope: ActionEnvelope = {
  channel: 'ahp-changeset:/s1/session',
  action: { type: 'changeset/fileRemoved', fileId: 'file:///w/src/a.ts' },
  serverSeq: 9,
  origin: undefined,
};

const clientEnvelope: ActionEnvelope = {
  channel: 'ahp-changeset:/s1/session',
  action: { type: 'changeset/filesReviewChanged', files: ['file:///w/src/a.ts'], reviewed: true },
  serverSeq: 10,
  origin: { clientId: 'ide-1', clientSeq: 4 },
};

/** What goes on the wire: `undefined` keys vanish. */
function wire<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

describe('schema helper', () => {
  it('accepts a ChangesetState snapshot and a SessionState built from our types', () => {
    const snapshot: Snapshot = { resource: 'ahp-changeset:/s1/session', state: changesetState, fromSeq: 8 };
    assertValid('ChangesetState', wire(changesetState));
    assertValid('SessionState', wire(sessionState));
    assertValid('Snapshot', wire(snapshot));
  });

  it('accepts action envelopes with and without origin', () => {
    assertValid('ActionEnvelope', wire(serverEnvelope));
    expect('origin' in wire(serverEnvelope)).toBe(false);
    assertValid('ActionEnvelope', wire(clientEnvelope));
    assertValid('ActionEnvelope', wire({ ...clientEnvelope, rejectionReason: 'no such file' }));
  });

  it('accepts an InitializeResult', () => {
    const result: InitializeResult = {
      protocolVersion: AHP_PROTOCOL_VERSION,
      serverSeq: 42,
      serverInfo: { name: 'changeset-server', version: '0.1.0' },
      snapshots: [
        { resource: ROOT_CHANNEL, state: { agents: [], activeSessions: 1 }, fromSeq: 42 },
        { resource: 'ahp-session:/s1', state: sessionState, fromSeq: 42 },
      ],
    };
    assertValid('InitializeResult', wire(result), 'commands');
    assertValidOutbound({ jsonrpc: '2.0', id: 1, result: wire(result) }, 'initialize');
  });

  it("throws with Ajv's error text", () => {
    expect(() => assertValid('ChangesetState', { status: 'done', files: [] })).toThrow(/ChangesetState\/status must be equal to one of the allowed values/);
    expect(() => assertValid('ChangesetFile', { id: 'x' })).toThrow(/must have required property 'edit'/);
    expect(schemaErrors('TextRange', { start: { line: 1, character: 0 }, end: { line: 2, character: 0 } })).toBeUndefined();
    expect(() => assertValid('NoSuchThing', {})).toThrow(/no schema definition NoSuchThing/);
  });

  it('checks whole outbound messages by method', () => {
    assertValidOutbound({ jsonrpc: '2.0', method: 'action', params: wire(serverEnvelope) });
    const added: SessionAddedParams = {
      channel: ROOT_CHANNEL,
      summary: {
        resource: 'ahp-session:/s1',
        provider: 'claude-code',
        title: 'New',
        status: SessionStatus.Idle,
        createdAt: '2024-01-01T00:00:00.000Z',
        modifiedAt: '2024-01-01T00:00:00.000Z',
        changes: { files: 2, additions: 10, deletions: 3 },
      },
    };
    assertValidOutbound({ jsonrpc: '2.0', method: 'root/sessionAdded', params: added });
    assertValidOutbound({ jsonrpc: '2.0', method: 'root/sessionRemoved', params: { channel: ROOT_CHANNEL, session: 'ahp-session:/s1' } });
    assertValidOutbound({
      jsonrpc: '2.0',
      method: 'root/sessionSummaryChanged',
      params: { channel: ROOT_CHANNEL, session: 'ahp-session:/s1', changes: { title: 'Renamed' } },
    });
    assertValidOutbound({ jsonrpc: '2.0', id: 2, result: null }, 'ping');
    assertValidOutbound({ jsonrpc: '2.0', id: 3, result: { snapshot: { resource: 'ahp-changeset:/s1/session', state: changesetState, fromSeq: 1 } } }, 'subscribe');
    assertValidOutbound({ jsonrpc: '2.0', id: 4, result: { type: 'replay', actions: [wire(clientEnvelope)], missing: [] } }, 'reconnect');
    assertValidOutbound({ jsonrpc: '2.0', id: 5, result: { items: [], nextCursor: 'c' } }, 'listSessions');
    assertValidOutbound({ jsonrpc: '2.0', id: 6, result: { message: 'Reverted 1 file' } }, 'invokeChangesetOperation');
    assertValidOutbound({ jsonrpc: '2.0', id: 7, error: { code: AhpErrorCodes.PermissionDenied, message: 'outside the working directory' } });
    assertValidOutbound({ jsonrpc: '2.0', id: null, error: { code: JsonRpcErrorCodes.ParseError, message: 'bad JSON' } });

    expect(() => assertValidOutbound({ jsonrpc: '2.0', method: 'action', params: { channel: 'x', serverSeq: 1 } })).toThrow(/ActionEnvelope/);
    expect(() => assertValidOutbound({ jsonrpc: '2.0', id: 1, result: {} }, 'ping')).toThrow(/ping result must be null/);
    expect(() => assertValidOutbound({ jsonrpc: '2.0', id: 1, error: { code: -1, message: 'x' } })).toThrow(/neither/);
    expect(() => assertValidOutbound({ jsonrpc: '2.0', id: 1, result: {} })).toThrow(/request method/);
    expect(() => assertValidOutbound({ jsonrpc: '2.0', method: 'root/sessionAdded', params: { channel: ROOT_CHANNEL } })).toThrow(/summary/);
  });
});

interface RoundTrip {
  name: string;
  type: string;
  input: unknown;
  acceptableOutputs: unknown[];
  preservedOutput?: unknown;
}

const roundTrips = readdirSync(roundTripDir)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => [f, JSON.parse(readFileSync(path.join(roundTripDir, f), 'utf8')) as RoundTrip] as const);

describe('AHP round-trip fixtures', () => {
  for (const [file, fixture] of roundTrips) {
    it(`${file}: ${fixture.name}`, () => {
      // JSON.parse/stringify is our codec: the canonical output, or the input verbatim
      // where the fixture says TypeScript keeps unknown keys.
      expect(wire(fixture.input)).toEqual(fixture.preservedOutput ?? fixture.acceptableOutputs[0]);

      switch (fixture.type) {
        case 'ActionEnvelope': {
          assertValid('ActionEnvelope', fixture.input, 'actions');
          const envelope = fixture.input as ActionEnvelope;
          const state = reduce('session', { ...sessionState }, envelope.action);
          expect(state.title).toBe('Hello');
          break;
        }
        case 'ChangesetOperationTarget':
          expect(validateChangesetOperationTarget(fixture.input)).toEqual({ ok: true, value: fixture.input });
          assertValid('ChangesetOperationTarget', fixture.input, 'commands');
          break;
        case 'SessionSummary':
          assertValid('SessionSummary', fixture.input as SessionSummary);
          break;
        case 'StateAction': {
          assertValid('StateAction', fixture.input, 'actions');
          const next = reduce('session', sessionState, fixture.input as StateAction);
          expect(wire(next.changesets)).toEqual((fixture.input as { changesets: unknown }).changesets);
          break;
        }
        case 'JsonRpcMessage':
          break;
        default:
          throw new Error(`round-trip type ${fixture.type} is not covered`);
      }
    });
  }
});
