import { describe, expect, it } from 'vitest';
import { CLIENT_DISPATCHABLE_ACTIONS, isInboundMethod, validateClientAction, validateDispatchEnvelope, validateParams } from '../../protocol/index.js';
import type { InboundMethod } from '../../protocol/index.js';

const root = 'ahp-root://';
const session = 'ahp-session:/s1';
const changeset = 'ahp-changeset:/s1/session';

const good: { [M in InboundMethod]: unknown[] } = {
  initialize: [
    { channel: root, protocolVersions: ['0.6.0'], clientId: 'c1' },
    {
      channel: root,
      protocolVersions: ['0.7.0', '0.6.0'],
      clientId: 'c1',
      clientInfo: { name: 'ide', version: '1.0' },
      initialSubscriptions: [root, session],
      locale: 'en-US',
      capabilities: {},
      somethingFromTheFuture: { x: 1 },
    },
  ],
  reconnect: [{ channel: root, clientId: 'c1', lastSeenServerSeq: 0, subscriptions: [] }],
  ping: [{ channel: root }],
  subscribe: [{ channel: root }, { channel: 'ahp-chat:/c1', delivery: { maxLatencyMs: 0 }, view: { turns: 20 } }, { channel: changeset }],
  unsubscribe: [{ channel: session }],
  dispatchAction: [
    {
      channel: changeset,
      clientSeq: 1,
      action: { type: 'changeset/filesReviewChanged', files: ['file:///w/a.ts'], reviewed: true },
    },
  ],
  listSessions: [{ channel: root }, { channel: root, limit: 50, cursor: 'opaque' }],
  createSession: [
    { channel: session },
    {
      channel: session,
      provider: 'claude-code',
      workingDirectory: 'file:///home/me/project',
      fork: { session: 'ahp-session:/s0', turnId: 't3' },
      config: { a: 1 },
      activeClient: { clientId: 'c1', tools: [] },
    },
  ],
  disposeSession: [{ channel: session }],
  resourceRead: [
    { channel: root, uri: 'ahp-content:/abc' },
    { channel: root, uri: 'file:///a', encoding: 'utf-8' },
  ],
  invokeChangesetOperation: [
    { channel: changeset, operationId: 'revert' },
    { channel: changeset, operationId: 'revert', target: { kind: 'resource', resource: 'file:///a.txt' } },
    {
      channel: changeset,
      operationId: 'revert',
      target: {
        kind: 'range',
        resource: 'file:///a.txt',
        side: 'after',
        range: { start: { line: 2, character: 0 }, end: { line: 5, character: 10 } },
      },
    },
  ],
};

const bad: [InboundMethod, unknown, string][] = [
  ['initialize', undefined, 'params must be an object'],
  ['initialize', [], 'params must be an object'],
  ['initialize', { protocolVersions: ['0.6.0'], clientId: 'c' }, 'params.channel must be "ahp-root://"'],
  ['initialize', { channel: root, protocolVersions: [], clientId: 'c' }, 'params.protocolVersions must be a non-empty array'],
  ['initialize', { channel: root, protocolVersions: ['0.6.0', 7], clientId: 'c' }, 'params.protocolVersions[1] must be a non-empty string'],
  ['initialize', { channel: root, protocolVersions: ['0.6.0'], clientId: '' }, 'params.clientId must be a non-empty string'],
  ['initialize', { channel: root, protocolVersions: ['0.6.0'], clientId: 'c', clientInfo: {} }, 'params.clientInfo.name must be a non-empty string'],
  ['reconnect', { channel: root, clientId: 'c', lastSeenServerSeq: -1, subscriptions: [] }, 'params.lastSeenServerSeq must be a non-negative integer'],
  ['reconnect', { channel: root, clientId: 'c', lastSeenServerSeq: 1.5, subscriptions: [] }, 'params.lastSeenServerSeq must be a non-negative integer'],
  ['reconnect', { channel: root, clientId: 'c', lastSeenServerSeq: 1 }, 'params.subscriptions must be an array'],
  ['ping', {}, 'params.channel must be "ahp-root://"'],
  ['ping', { channel: session }, 'params.channel must be "ahp-root://"'],
  ['subscribe', { channel: '' }, 'params.channel must be a non-empty string'],
  ['subscribe', { channel: 'ahp-terminal:/t1' }, 'params.channel must be one of ahp-root://, ahp-session:/<id>, ahp-chat:/<id>, ahp-changeset:/<id>'],
  ['subscribe', { channel: root, view: { turns: -2 } }, 'params.view.turns must be a non-negative integer'],
  ['subscribe', { channel: root, delivery: 5 }, 'params.delivery must be an object'],
  ['unsubscribe', { channel: 42 }, 'params.channel must be a non-empty string'],
  ['listSessions', { channel: root, limit: 0 }, 'params.limit must be a positive integer'],
  ['listSessions', { channel: root, cursor: '' }, 'params.cursor must be a non-empty string'],
  ['createSession', { channel: changeset }, 'params.channel must be an ahp-session:/<id> URI'],
  ['createSession', { channel: session, workingDirectory: '/home/me' }, 'params.workingDirectory must be a file: URI'],
  ['createSession', { channel: session, fork: { session, turnId: '' } }, 'params.fork.turnId must be a non-empty string'],
  ['createSession', { channel: session, activeClient: { clientId: 'c' } }, 'params.activeClient.tools must be an array'],
  ['disposeSession', { channel: 'ahp-session:/s1/annotations' }, 'params.channel must be an ahp-session:/<id> URI'],
  ['resourceRead', { channel: root }, 'params.uri must be a non-empty string'],
  ['resourceRead', { channel: root, uri: 'x', encoding: 'latin1' }, 'params.encoding must be one of "base64", "utf-8"'],
  ['invokeChangesetOperation', { channel: session, operationId: 'revert' }, 'params.channel must be an ahp-changeset:/<id> URI'],
  ['invokeChangesetOperation', { channel: changeset }, 'params.operationId must be a non-empty string'],
  [
    'invokeChangesetOperation',
    { channel: changeset, operationId: 'revert', target: { kind: 'hunk', resource: 'file:///a' } },
    'params.target.kind must be one of "resource", "range"',
  ],
  [
    'invokeChangesetOperation',
    { channel: changeset, operationId: 'revert', target: { kind: 'resource' } },
    'params.target.resource must be a non-empty string',
  ],
  [
    'invokeChangesetOperation',
    { channel: changeset, operationId: 'revert', target: { kind: 'resource', resource: 'file:///a', side: 'left' } },
    'params.target.side must be one of "before", "after"',
  ],
  [
    'invokeChangesetOperation',
    { channel: changeset, operationId: 'revert', target: { kind: 'range', resource: 'file:///a' } },
    'params.target.range must be an object',
  ],
  [
    'invokeChangesetOperation',
    {
      channel: changeset,
      operationId: 'revert',
      target: { kind: 'range', resource: 'file:///a', range: { start: { line: -1, character: 0 }, end: { line: 1, character: 0 } } },
    },
    'params.target.range.start.line must be a non-negative integer',
  ],
  [
    'invokeChangesetOperation',
    {
      channel: changeset,
      operationId: 'revert',
      target: { kind: 'range', resource: 'file:///a', range: { start: { line: 4, character: 0 }, end: { line: 1, character: 0 } } },
    },
    'params.target.range.end must not come before params.target.range.start',
  ],
  ['dispatchAction', { channel: changeset, action: { type: 'changeset/cleared' } }, 'params.clientSeq must be a non-negative integer'],
  ['dispatchAction', { channel: changeset, clientSeq: 1, action: {} }, 'params.action.type must be a non-empty string'],
  [
    'dispatchAction',
    { channel: changeset, clientSeq: 1, action: { type: 'changeset/cleared' } },
    'params.action.type "changeset/cleared" is not client-dispatchable',
  ],
  [
    'dispatchAction',
    { channel: session, clientSeq: 1, action: { type: 'session/titleChanged', title: 'x' } },
    'params.action.type "session/titleChanged" is not client-dispatchable',
  ],
  [
    'dispatchAction',
    { channel: session, clientSeq: 1, action: { type: 'changeset/filesReviewChanged', files: ['a'], reviewed: true } },
    'params.action.type "changeset/filesReviewChanged" can only be dispatched to an ahp-changeset:/<id> channel',
  ],
  [
    'dispatchAction',
    { channel: changeset, clientSeq: 1, action: { type: 'changeset/filesReviewChanged', files: [], reviewed: true } },
    'params.action.files must be a non-empty array',
  ],
  [
    'dispatchAction',
    { channel: changeset, clientSeq: 1, action: { type: 'changeset/filesReviewChanged', files: ['a', ''], reviewed: true } },
    'params.action.files[1] must be a non-empty string',
  ],
  [
    'dispatchAction',
    { channel: changeset, clientSeq: 1, action: { type: 'changeset/filesReviewChanged', files: ['a'], reviewed: 'yes' } },
    'params.action.reviewed must be a boolean',
  ],
];

describe('validateParams', () => {
  for (const [method, cases] of Object.entries(good)) {
    it(`accepts good ${method} params`, () => {
      for (const params of cases) {
        const result = validateParams(method as InboundMethod, params);
        expect(result).toEqual({ ok: true, value: params });
        // The value is the input itself, unknown keys included.
        if (result.ok) expect(result.value).toBe(params);
      }
    });
  }

  for (const [method, params, message] of bad) {
    it(`${method}: ${message}`, () => {
      expect(validateParams(method, params)).toEqual({ ok: false, message });
    });
  }

  it('knows which methods it accepts', () => {
    expect(isInboundMethod('subscribe')).toBe(true);
    expect(isInboundMethod('resourceWrite')).toBe(false);
    expect(isInboundMethod('toString')).toBe(false);
    expect(validateParams('resourceWrite', {})).toBeUndefined();
  });
});

describe('dispatchAction in two stages', () => {
  it('separates an unusable envelope from a rejectable action', () => {
    const params = { channel: changeset, clientSeq: 3, action: { type: 'changeset/cleared' } };
    const envelope = validateDispatchEnvelope(params);
    expect(envelope.ok).toBe(true);
    if (!envelope.ok) return;
    expect(validateClientAction(envelope.value.channel, envelope.value.action)).toEqual({
      ok: false,
      message: 'params.action.type "changeset/cleared" is not client-dispatchable',
    });
    expect(validateDispatchEnvelope({ channel: 'nope', clientSeq: 1, action: { type: 'x' } })).toEqual({
      ok: false,
      message: 'params.channel must be one of ahp-root://, ahp-session:/<id>, ahp-chat:/<id>, ahp-changeset:/<id>',
    });
  });

  it('allows only filesReviewChanged', () => {
    expect(CLIENT_DISPATCHABLE_ACTIONS).toEqual(['changeset/filesReviewChanged', 'session/isArchivedChanged']);
    expect(validateClientAction(changeset, { type: '__proto__' })).toEqual({
      ok: false,
      message: 'params.action.type "__proto__" is not client-dispatchable',
    });
  });
});
