import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChangesetService, type ChangesetServiceOptions } from '../../server/service.js';

/** A whole service started in-process on a free loopback port, with a temporary state directory. */
export interface TestService {
  service: ChangesetService;
  url: string;
  stateDir: string;
  stop(): Promise<void>;
}

export async function startTestService(options: ChangesetServiceOptions = {}): Promise<TestService> {
  const stateDir = await mkdtemp(join(tmpdir(), 'cs-harness-state-'));
  const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir, log: () => undefined, ...options });
  const { url } = await service.start();
  return {
    service,
    url,
    stateDir,
    stop: async () => {
      await service.stop();
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}
