import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChangesetServer, type ChangesetServerOptions } from '../../server/app.js';

/** A server started in-process for one test. */
export interface TestServer {
  /** The running server (store, method registry, providers). */
  server: ChangesetServer;
  /** Its WebSocket URL. */
  url: string;
  /** The temporary state directory, removed by `stop`. */
  stateDir: string;
  /** Stops the server and removes the state directory. */
  stop(): Promise<void>;
}

/** Starts a `ChangesetServer` on 127.0.0.1, port 0, with a fresh temporary state directory. */
export async function startTestServer(options: ChangesetServerOptions = {}): Promise<TestServer> {
  const stateDir = await mkdtemp(join(tmpdir(), 'changeset-server-test-'));
  const server = new ChangesetServer({ host: '127.0.0.1', port: 0, stateDir, ...options });
  const { url } = await server.start();
  return {
    server,
    url,
    stateDir,
    stop: async () => {
      await server.stop();
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}
