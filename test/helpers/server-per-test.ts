import { afterEach, beforeEach } from 'vitest';
import type { ChangesetServer } from '../../server/app.js';
import { TestClient } from './client.js';
import { startTestServer, type TestServer } from './server.js';

/** A fresh in-process server for each test of a file, and clients on it closed after each test. */
export interface ServerPerTest {
  /** This test's server. */
  readonly server: ChangesetServer;
  /** Its WebSocket URL. */
  readonly url: string;
  /** A client connected (not yet initialized) to this test's server. */
  connect(): Promise<TestClient>;
}

/** Registers the hooks that start a server before each test and close its clients and the server after it. */
export function useServerPerTest(): ServerPerTest {
  let t: TestServer | undefined;
  const clients: TestClient[] = [];
  beforeEach(async () => {
    t = await startTestServer();
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await t?.stop();
    t = undefined;
  });
  const current = (): TestServer => {
    if (!t) throw new Error('no server outside a test');
    return t;
  };
  return {
    get server() {
      return current().server;
    },
    get url() {
      return current().url;
    },
    async connect() {
      const c = await TestClient.connect(current().url);
      clients.push(c);
      return c;
    },
  };
}
