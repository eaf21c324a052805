import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ReconnectReplayResult, SessionState } from '../../protocol/index.js';
import { TestClient } from '../helpers/client.js';
import { recordTurn } from '../helpers/changesets.js';
import { serviceForEachTest, type TestService } from '../helpers/service.js';
import { makeRepo, TempDirs } from '../helpers/workspace.js';

const temp = new TempDirs();
let svc: TestService;
let client: TestClient;
serviceForEachTest(temp, (s, c) => ((svc = s), (client = c)));

const SESSION = 'ahp-session:/T';

/** The catalogue's templates, as a client that forgot to expand them would send them. */
async function templates(): Promise<string[]> {
  await client.subscribe(SESSION);
  const catalogue = client.state<SessionState>(SESSION)!.changesets ?? [];
  return catalogue.map((entry) => entry.uriTemplate).filter((t) => t.includes('{'));
}

describe('a changeset URI template sent without expanding it', () => {
  it('is refused with -32602 by every method that takes a changeset URI, naming the variable', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
    await recordTurn(client, SESSION, 'one', () => writeFileSync(join(repo, 'a.txt'), 'b\n'));
    const unexpanded = await templates();
    expect(unexpanded.some((t) => t.endsWith('/turn/{turnId}'))).toBe(true);

    for (const template of unexpanded) {
      const variable = /\{[^}]*\}/.exec(template)![0];
      const calls: [string, Record<string, unknown>][] = [
        ['subscribe', { channel: template }],
        ['invokeChangesetOperation', { channel: template, operationId: 'revert' }],
        ['changesetFileDiff', { channel: template, fileId: pathToFileURL(join(repo, 'a.txt')).href }],
        ['resourceRead', { channel: 'ahp-root://', uri: template }],
      ];
      for (const [method, params] of calls) {
        const error = await client.requestError(method, params);
        expect({ method, template, code: error.code }).toEqual({ method, template, code: -32602 });
        expect(error.message).toContain(variable);
        expect(error.message).toMatch(/not a template/);
      }
    }
    // A subscription was never made, and the turn's real changeset still answers.
    expect(client.state(unexpanded[0]!)).toBeUndefined();
    await expect(client.subscribe('ahp-changeset:/T/turn/one')).resolves.toHaveProperty('snapshot');
  });

  it('is listed as missing by reconnect and skipped by initialize', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
    const template = 'ahp-changeset:/T/turn/{turnId}';
    const again = await TestClient.connect(svc.url);
    try {
      const result = (await again.reconnect([SESSION, template], svc.service.server.store.serverSeq)) as ReconnectReplayResult;
      expect(result).toMatchObject({ type: 'replay', missing: [template] });
      expect(again.state(template)).toBeUndefined();
      const fresh = await TestClient.connect(svc.url);
      const init = await fresh.initialize({ initialSubscriptions: ['ahp-root://', template] });
      expect(init.snapshots?.map((s) => s.resource)).toEqual(['ahp-root://']);
      await fresh.close();
    } finally {
      await again.close();
    }
  });
});
