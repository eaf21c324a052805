import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Method } from '../../protocol/methods.js';
import { MethodRegistry } from '../../server/connection/method-registry.js';
import type { MethodTable } from '../../server/method-table.js';
import type { RpcClient } from '../../server/client/rpc-client.js';
import type { TestClient } from '../helpers/client.js';
import { startTestService, type TestService } from '../helpers/service.js';

/** Every method of the map, and whether it is a request; the compiler checks the list is complete. */
const METHODS: Record<Method, 'request' | 'notification'> = {
  initialize: 'request',
  reconnect: 'request',
  ping: 'request',
  subscribe: 'request',
  unsubscribe: 'notification',
  dispatchAction: 'notification',
  listSessions: 'request',
  createSession: 'request',
  disposeSession: 'request',
  resourceRead: 'request',
  invokeChangesetOperation: 'request',
  'harness/turnStarted': 'request',
  'harness/beforeEdit': 'request',
  'harness/turnEnded': 'request',
  'harness/presentFiles': 'request',
  'harness/sessionEnded': 'request',
  'harness/status': 'request',
  changesetFileDiff: 'request',
  changesetFiles: 'request',
  fileHistory: 'request',
  forgetSession: 'request',
  'mirror/status': 'request',
  'comments/add': 'request',
  'comments/list': 'request',
  'comments/resolve': 'request',
  'comments/reopen': 'request',
  'comments/delete': 'request',
  'provenance/lines': 'request',
};

/** Served only while mirroring (`serve --mirror`); test/mirror covers it. */
const ONLY_WHILE_MIRRORING = new Set<Method>(['mirror/status']);

/** Requests whose params may be left out or carry nothing to check. */
const NO_PARAMS_TO_REFUSE = new Set<Method>(['ping', 'mirror/status']);

describe('the method map', () => {
  let svc: TestService;
  let client: TestClient;
  beforeAll(async () => {
    svc = await startTestService();
    client = await svc.client();
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('is what the server serves, each method as the kind the map says', () => {
    for (const [method, kind] of Object.entries(METHODS) as [Method, string][]) {
      if (ONLY_WHILE_MIRRORING.has(method)) continue;
      expect(svc.service.server.methods.get(method)?.kind, method).toBe(kind);
    }
  });

  it('refuses malformed params of every request with -32602 naming the field', async () => {
    for (const [method, kind] of Object.entries(METHODS) as [Method, string][]) {
      if (kind !== 'request' || ONLY_WHILE_MIRRORING.has(method) || NO_PARAMS_TO_REFUSE.has(method)) continue;
      const error = await client.requestError(method, { channel: 42, turnId: 7, fileId: [], uri: false, protocolVersions: 'x', subscriptions: 1 });
      expect(error.code, method).toBe(-32602);
      expect(error.message.length, method).toBeGreaterThan(0);
    }
  });

  it('refuses a second registration of a name', () => {
    const registry = new MethodRegistry();
    const table: MethodTable = { forgetSession: { request: () => null, check: () => undefined } };
    registry.register(table);
    expect(() => registry.register(table)).toThrow('method already registered: forgetSession');
  });
});

/**
 * Never run: the compiler (`npm run typecheck`) fails when a line marked
 * `@ts-expect-error` compiles, i.e. when the map stops catching the mistake.
 */
function mistakesTheMapCatches(registry: MethodRegistry, rpc: RpcClient): void {
  // @ts-expect-error a method the map does not know
  registry.register({ 'test/echo': { request: () => null, check: () => undefined } });
  // @ts-expect-error a result that is not the map's
  registry.register({ forgetSession: { request: () => 42, check: () => undefined } });
  // @ts-expect-error params that are not the map's
  registry.register({ forgetSession: { request: (params: { channel: number }) => (params.channel > 0 ? null : null), check: () => undefined } });
  // @ts-expect-error an extension method without its params check
  registry.register({ forgetSession: { request: () => null } });
  // @ts-expect-error a notification served as a request
  registry.register({ unsubscribe: { request: () => null } });
  // @ts-expect-error a call the map does not know
  void rpc.request('test/echo', {});
  // @ts-expect-error params that are not the map's
  void rpc.request('forgetSession', { channel: 1 });
  // @ts-expect-error required params left out
  void rpc.request('harness/turnEnded');
  // Params the map lets go may be left out.
  void rpc.request('harness/status');
}
void mistakesTheMapCatches;
