import { describe, expect, it } from 'vitest';
import type { ChangesetState, RootState } from '../../protocol/index.js';
import { useServerPerTest } from '../helpers/server-per-test.js';
import { createChangeset, file } from './fixtures.js';

const ROOT = 'ahp-root://';

describe('initialize, subscribe and listSessions', () => {
  const t = useServerPerTest();
  const connect = () => t.connect();

  it('negotiates 0.6.0 and returns the root snapshot and serverSeq', async () => {
    const c = await connect();
    const result = await c.initialize({ protocolVersions: ['9.0.0', '0.6.0', '0.5.0'] });
    expect(result.protocolVersion).toBe('0.6.0');
    expect(result.serverSeq).toBe(t.server.store.serverSeq);
    expect(result.serverInfo?.name).toBe('changeset-server');
    expect(result.snapshots).toEqual([{ resource: ROOT, state: { agents: [] }, fromSeq: result.serverSeq }]);
    expect(c.state<RootState>(ROOT)).toEqual({ agents: [] });
  });

  it('refuses unsupported versions with -32005 listing ours, then closes', async () => {
    const c = await connect();
    const error = await c.requestError('initialize', { channel: ROOT, protocolVersions: ['0.5.0', '1.0.0'], clientId: 'old' });
    expect(error.code).toBe(-32005);
    expect(error.data).toEqual({ supportedVersions: ['0.6.0'] });
    await c.waitForClose();
  });

  it('answers ping before initialize', async () => {
    const c = await connect();
    await expect(c.request('ping', { channel: ROOT })).resolves.toBeNull();
  });

  it('refuses other requests before initialize with -32600', async () => {
    const c = await connect();
    const error = await c.requestError('subscribe', { channel: ROOT });
    expect(error.code).toBe(-32600);
    expect(error.message).toContain('initialize');
    expect((await c.initialize()).protocolVersion).toBe('0.6.0');
  });

  it('refuses a second initialize with -32600', async () => {
    const c = await connect();
    await c.initialize();
    const error = await c.requestError('initialize', { channel: ROOT, protocolVersions: ['0.6.0'], clientId: 'again' });
    expect(error.code).toBe(-32600);
    await expect(c.request('ping', { channel: ROOT })).resolves.toBeNull();
  });

  it('validates initialize params, naming the field', async () => {
    const c = await connect();
    const error = await c.requestError('initialize', { channel: ROOT, protocolVersions: '0.6.0', clientId: 'x' });
    expect(error.code).toBe(-32602);
    expect(error.message).toContain('protocolVersions');
  });

  it('subscribes to root and to a changeset, with snapshots at the current serverSeq', async () => {
    const uri = 'ahp-changeset:/s1/session';
    createChangeset(t.server.store, uri, ['a.ts'], true);
    const c = await connect();
    await c.initialize({ initialSubscriptions: [] });
    const root = await c.subscribe(ROOT);
    expect(root.snapshot?.resource).toBe(ROOT);
    const changeset = await c.subscribe(uri);
    expect(changeset.snapshot).toMatchObject({ resource: uri, fromSeq: t.server.store.serverSeq });
    expect((changeset.snapshot!.state as ChangesetState).files.map((f) => f.id)).toEqual(['file:///w/a.ts']);
    t.server.store.dispatch(uri, { type: 'changeset/fileSet', file: file('b.ts') });
    await c.waitForEnvelope((e) => e.channel === uri);
    expect(c.state<ChangesetState>(uri)?.files.map((f) => f.id)).toEqual(['file:///w/a.ts', 'file:///w/b.ts']);
  });

  it('refuses unknown channels with -32008 (-32001 for sessions) and malformed URIs with -32602', async () => {
    const c = await connect();
    await c.initialize();
    expect((await c.requestError('subscribe', { channel: 'ahp-changeset:/nope' })).code).toBe(-32008);
    expect((await c.requestError('subscribe', { channel: 'ahp-session:/nope' })).code).toBe(-32001);
    const malformed = await c.requestError('subscribe', { channel: 'https://example.com/' });
    expect(malformed.code).toBe(-32602);
    expect(malformed.message).toContain('channel');
    expect((await c.requestError('subscribe', { channel: 'ahp-session:/' })).code).toBe(-32602);
  });

  it('creates lazily-resolved channels on subscribe', async () => {
    t.server.store.registerResolver('ahp-changeset:', async (uri) => {
      if (uri.endsWith('/lazy')) createChangeset(t.server.store, uri, ['lazy.ts'], false);
    });
    const c = await connect();
    await c.initialize();
    const result = await c.subscribe('ahp-changeset:/s1/lazy');
    expect((result.snapshot!.state as ChangesetState).files).toHaveLength(1);
    expect((await c.requestError('subscribe', { channel: 'ahp-changeset:/s1/other' })).code).toBe(-32008);
  });

  it('stops delivery after unsubscribe', async () => {
    const uri = 'ahp-changeset:/s1/session';
    createChangeset(t.server.store, uri, [], false);
    const c = await connect();
    await c.initialize({ initialSubscriptions: [ROOT, uri] });
    c.unsubscribe(uri);
    await c.request('ping', { channel: ROOT });
    t.server.store.dispatch(uri, { type: 'changeset/fileSet', file: file('x.ts') });
    t.server.store.dispatch(ROOT, { type: 'root/activeSessionsChanged', activeSessions: 1 });
    await c.waitForEnvelope((e) => e.channel === ROOT);
    expect(c.envelopes.filter((e) => e.channel === uri)).toEqual([]);
  });

  it('sends root notifications to root subscribers only', async () => {
    const subscribed = await connect();
    await subscribed.initialize();
    const other = await connect();
    await other.initialize({ initialSubscriptions: [] });
    t.server.notifyRoot('root/sessionRemoved', { channel: ROOT, session: 'ahp-session:/gone' });
    await subscribed.waitForNotification('root/sessionRemoved');
    await other.request('ping', { channel: ROOT });
    expect(other.received.filter((m) => m['method'] === 'root/sessionRemoved')).toEqual([]);
  });

  it('lists an empty catalogue, accepts limit, and rejects a cursor it never issued', async () => {
    const c = await connect();
    await c.initialize();
    await expect(c.request('listSessions', { channel: ROOT })).resolves.toEqual({ items: [] });
    await expect(c.request('listSessions', { channel: ROOT, limit: 10 })).resolves.toEqual({ items: [] });
    expect((await c.requestError('listSessions', { channel: ROOT, cursor: 'bogus' })).code).toBe(-32602);
    expect((await c.requestError('listSessions', { channel: ROOT, limit: 0 })).code).toBe(-32602);
  });

  it('explains that createSession needs a session provider', async () => {
    const c = await connect();
    await c.initialize();
    const error = await c.requestError('createSession', { channel: 'ahp-session:/new' });
    expect(error.code).toBe(-32601);
    expect(error.message).toContain('session provider');
  });

  it('routes methods registered by other modules', async () => {
    t.server.register({ 'mirror/status': { request: () => ({ url: 'https://example.test/mirror.git', workspaces: [] }), check: () => undefined } });
    const c = await connect();
    await c.initialize();
    await expect(c.request('mirror/status', {})).resolves.toEqual({ url: 'https://example.test/mirror.git', workspaces: [] });
  });
});
