import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Message } from 'vscode-jsonrpc/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import type { ActionEnvelope, ChangesetState, InitializeResult, SessionAddedParams, SessionState, SessionSummary, Snapshot } from '../../protocol/index.js';
import { AHP_PROTOCOL_VERSION, AhpErrorCodes, JsonRpcErrorCodes, ROOT_CHANNEL, SessionStatus, validateParams } from '../../protocol/index.js';
import { reduce } from '../../reducers/index.js';
import { notificationFrame } from '../../server/channels/frames.js';
import { errorResponseFrame, resolveTransportLimits, WsPeer } from '../../server/transport/index.js';
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
    assertValidOutbound(
      { jsonrpc: '2.0', id: 3, result: { snapshot: { resource: 'ahp-changeset:/s1/session', state: changesetState, fromSeq: 1 } } },
      'subscribe',
    );
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

/**
 * The server's side of one connection (a `WsPeer`, as every client gets) on
 * a real socket, with the client's socket: what the client sends arrives
 * decoded the way the server decodes it, and what the server writes arrives
 * as the bytes a client reads.
 */
interface Wire {
  /** Sends `text` from the client; resolves with the message the server decoded from it. */
  serverDecodes(text: string): Promise<Message>;
  /** Writes `message` through the server's JSON-RPC writer; resolves with the text the client received. */
  serverWrites(message: Message): Promise<string>;
  /** Sends a pre-built frame as the server fans frames out; resolves with the text the client received. */
  serverSends(frame: string): Promise<string>;
  close(): Promise<void>;
}

/** A FIFO whose `next()` resolves with the next value pushed (or one already waiting). */
function queue<T>(): { push(value: T): void; next(): Promise<T> } {
  const values: T[] = [];
  const takers: ((value: T) => void)[] = [];
  return {
    push: (value) => {
      const take = takers.shift();
      if (take) take(value);
      else values.push(value);
    },
    next: () => (values.length > 0 ? Promise.resolve(values.shift()!) : new Promise((resolve) => takers.push(resolve))),
  };
}

async function openWire(): Promise<Wire> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await once(server, 'listening');
  const decoded = queue<Message>();
  const peerReady = new Promise<WsPeer>((resolve) =>
    server.once('connection', (socket) => {
      const peer = new WsPeer(socket, { limits: resolveTransportLimits() });
      peer.reader.listen((message) => decoded.push(message));
      resolve(peer);
    }),
  );
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  const received = queue<string>();
  client.on('message', (data, isBinary) => received.push(isBinary ? '<binary frame>' : data.toString()));
  await once(client, 'open');
  const peer = await peerReady;
  return {
    serverDecodes: (text) => {
      client.send(text);
      return decoded.next();
    },
    serverWrites: async (message) => {
      await peer.writer.write(message);
      return received.next();
    },
    serverSends: (frame) => {
      peer.send(frame);
      return received.next();
    },
    close: async () => {
      client.terminate();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe("AHP round-trip fixtures, through the server's own decoding, encoding and validation", () => {
  let link: Wire;
  beforeAll(async () => {
    link = await openWire();
  });
  afterAll(async () => {
    await link.close();
  });

  for (const [file, fixture] of roundTrips) {
    it(`${file}: ${fixture.name}`, async () => {
      // The canonical output, or the input verbatim where the fixture says
      // TypeScript keeps unknown keys (we have no runtime decoder that drops them).
      const expected = fixture.preservedOutput ?? fixture.acceptableOutputs[0];

      switch (fixture.type) {
        case 'ActionEnvelope': {
          // Server to client: the frame the channel store fans out.
          const sent = JSON.parse(await link.serverSends(notificationFrame('action', fixture.input))) as { params: ActionEnvelope };
          expect(sent.params).toStrictEqual(expected);
          assertValidOutbound(sent);
          const state = reduce('session', { ...sessionState }, sent.params.action);
          expect(state.title).toBe('Hello');
          break;
        }
        case 'StateAction': {
          const envelope = { channel: 'ahp-session:/s1', action: fixture.input, serverSeq: 1 };
          const sent = JSON.parse(await link.serverSends(notificationFrame('action', envelope))) as { params: ActionEnvelope };
          expect(sent.params.action).toStrictEqual(expected);
          assertValidOutbound(sent);
          const next = reduce('session', sessionState, sent.params.action);
          expect(JSON.parse(JSON.stringify(next.changesets))).toStrictEqual((expected as { changesets: unknown }).changesets);
          break;
        }
        case 'ChangesetOperationTarget': {
          // Client to server: the target of an operation request, decoded and validated as the server does.
          const request = {
            jsonrpc: '2.0',
            id: 1,
            method: 'invokeChangesetOperation',
            params: { channel: 'ahp-changeset:/s1/session', operationId: 'revert-file', target: fixture.input },
          };
          const decoded = (await link.serverDecodes(JSON.stringify(request))) as { params?: unknown };
          const validated = validateParams('invokeChangesetOperation', decoded.params);
          if (!validated.ok) throw new Error(validated.message);
          expect(validated.value.target).toStrictEqual(expected);
          assertValid('ChangesetOperationTarget', validated.value.target, 'commands');
          break;
        }
        case 'SessionSummary': {
          // Server to client, in the notification that carries a summary.
          const params: SessionAddedParams = { channel: ROOT_CHANNEL, summary: fixture.input as SessionSummary };
          const sent = JSON.parse(await link.serverSends(notificationFrame('root/sessionAdded', params))) as { params: SessionAddedParams };
          expect(sent.params.summary).toStrictEqual(expected);
          assertValidOutbound(sent);
          break;
        }
        case 'JsonRpcMessage': {
          // Decoded from a client's frame and written back by the server's JSON-RPC writer.
          const decoded = await link.serverDecodes(JSON.stringify(fixture.input));
          expect(decoded).toStrictEqual(expected);
          expect(JSON.parse(await link.serverWrites(decoded))).toStrictEqual(expected);
          // The frames the server builds itself, without the JSON-RPC library.
          const message = fixture.input as { id?: number; method?: string; params?: unknown; error?: { code: number; message: string; data?: unknown } };
          if (message.error) {
            const frame = JSON.parse(errorResponseFrame(message.id ?? null, message.error.code, message.error.message, message.error.data)) as unknown;
            expect(frame).toStrictEqual(expected);
            assertValidOutbound(frame);
          } else if (message.method !== undefined && message.id === undefined) {
            expect(JSON.parse(notificationFrame(message.method, message.params))).toStrictEqual(expected);
          }
          break;
        }
        default:
          throw new Error(`round-trip type ${fixture.type} is not covered`);
      }
    });
  }
});
