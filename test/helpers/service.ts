import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChangesetService, type ChangesetServiceOptions } from '../../server/service.js';
import { TestClient } from './client.js';

/** The whole product started in-process for one test, without authentication. */
export interface TestService {
  service: ChangesetService;
  url: string;
  stateDir: string;
  /** Connects and initializes a scripted client. */
  client(): Promise<TestClient>;
  /** Closes the clients, stops the service and removes the state directory. */
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
      await Promise.allSettled(clients.map((c) => c.close()));
      await service.stop();
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}
