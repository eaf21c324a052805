import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { ChangesetService, type ChangesetServiceOptions } from '../../server/service.js';
import { TestClient } from './client.js';
import type { TempDirs } from './workspace.js';

/** The whole product started in-process for one test, without authentication. */
export interface TestService {
  service: ChangesetService;
  url: string;
  stateDir: string;
  /** Connects and initializes a scripted client. */
  client(): Promise<TestClient>;
  /**
   * Closes the clients, stops the service and removes the state directory;
   * then throws if any client received a message that failed its check.
   */
  stop(): Promise<void>;
}

export async function startTestService(options: ChangesetServiceOptions = {}): Promise<TestService> {
  const stateDir = await mkdtemp(join(tmpdir(), 'changeset-service-test-'));
  const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir, log: () => undefined, ...options });
  const { url } = await service.start();
  const clients: TestClient[] = [];
  return {
    service,
    url,
    stateDir,
    client: async () => {
      const client = await TestClient.connect(url);
      await client.initialize();
      clients.push(client);
      return client;
    },
    stop: async () => {
      // Every client is closed and the service stopped even when one client
      // received an invalid message; that failure is then the test's.
      const closed = await Promise.allSettled(clients.map((c) => c.close()));
      await service.stop();
      await rm(stateDir, { recursive: true, force: true });
      const failure = closed.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failure) throw failure.reason;
    },
  };
}

/**
 * A fresh service and one initialized client for every test of the file:
 * `use` receives them before each test; after it they are stopped and
 * `temp`'s directories removed.
 */
export function serviceForEachTest(temp: TempDirs, use: (svc: TestService, client: TestClient) => void): void {
  let current: TestService | undefined;
  beforeEach(async () => {
    current = await startTestService();
    use(current, await current.client());
  });
  afterEach(async () => {
    try {
      await current?.stop();
    } finally {
      temp.cleanup();
    }
  });
}
