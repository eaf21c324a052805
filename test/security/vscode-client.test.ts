import { randomUUID } from 'node:crypto';
import { describe } from 'vitest';
import { changesetUriTemplate, ROOT_CHANNEL, type ChangesetState, type RootState } from '../../protocol/index.js';
import { startServe } from '../cli/serve-process.js';
import { TestClient } from '../helpers/client.js';
import { upgradeStatus } from '../helpers/upgrade.js';
import { it, type PerTest } from '../helpers/per-test.js';
import { makeRepo, writeFiles } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const VSCODE_ORIGIN = 'vscode-file://vscode-app';
async function serve(repo: string, { temp, defer }: PerTest): Promise<{ address: string; token: string; session: string }> {
  const server = await startServe([repo, '--port', '0', '--state-dir', temp.make('state-')]);
  defer(() => server.stop('SIGKILL'));
  // A `chat.remoteAgentHosts` entry names the host as `address` (host:port) and the token as `connectionToken`.
  return { address: new URL(server.ready.url).host, token: server.ready.token!, session: server.ready.sessions[0]! };
}

/** Opens a socket exactly as VS Code's WebSocket client transport does: `ws://<address>?tkn=<token>`, from its desktop origin. */
async function upgradeLikeVsCode(address: string, token: string | undefined, origin = VSCODE_ORIGIN): Promise<number> {
  return upgradeStatus(`ws://${address}${token === undefined ? '' : `?tkn=${encodeURIComponent(token)}`}`, { origin });
}

// Each test has its own server: they run side by side.
describe.concurrent('VS Code as an IDE client', { timeout: 120_000 }, () => {
  it('accepts the connection VS Code makes for a remote agent host and serves it over 0.6 when offered', async ({ temp, defer, expect }) => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const { address, token, session } = await serve(repo, { temp, defer });
    const client = await TestClient.connect(`ws://${address}?tkn=${encodeURIComponent(token)}`, { headers: { origin: VSCODE_ORIGIN } });
    // A version of another minor is never selected: the server answers with the 0.6 entry it speaks.
    const init = await client.request<{ protocolVersion: string; snapshots: { resource: string; state: RootState }[] }>('initialize', {
      channel: ROOT_CHANNEL,
      protocolVersions: ['0.9.0', '0.6.0'],
      clientId: randomUUID(),
      initialSubscriptions: [ROOT_CHANNEL],
    });
    expect(init.protocolVersion).toBe('0.6.0');
    expect(init.snapshots.map((s) => s.resource)).toEqual([ROOT_CHANNEL]);
    const sid = session.slice('ahp-session:/'.length);
    await client.request('harness/turnStarted', { channel: session, turnId: 't1' }, { timeoutMs: 20_000 });
    writeFiles(repo, { 'a.txt': 'A\n' });
    await client.request('harness/turnEnded', { channel: session, turnId: 't1' }, { timeoutMs: 20_000 });
    const uri = changesetUriTemplate(sid, 'session');
    await client.subscribe(uri);
    const deadline = Date.now() + 20_000;
    while (client.state<ChangesetState>(uri)?.status !== 'ready' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(client.state<ChangesetState>(uri)!.files.map((f) => (f._meta as { path: string }).path)).toEqual(['a.txt']);
    await client.close();
  });

  it("accepts VS Code's desktop origin and nothing broader, and still requires the token", async ({ temp, defer, expect }) => {
    const { address, token } = await serve(makeRepo(temp.make(), { 'a.txt': 'a\n' }), { temp, defer });
    expect(await upgradeLikeVsCode(address, token)).toBe(101);
    expect(await upgradeLikeVsCode(address, undefined)).toBe(401);
    expect(await upgradeLikeVsCode(address, 'wrong')).toBe(401);
    for (const origin of ['vscode-file://vscode-app.evil', 'vscode-file://other', 'vscode-webview://vscode-app', 'https://vscode-app', 'https://vscode.dev']) {
      expect(await upgradeLikeVsCode(address, token, origin), origin).toBe(403);
    }
  });
});
