/**
 * Planning an operation reads today's files; a folder swapped for a link
 * to somewhere else must not make it read the other place's files (the
 * plan's view of "today" goes into dry runs and into the safety
 * checkpoint). The read itself is checked, not only the path beforehand.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { recordTurn, subscribeReady } from '../helpers/changesets.js';
import type { TestClient } from '../helpers/client.js';
import { serviceForEachTest, type TestService } from '../helpers/service.js';
import { TempDirs, writeFiles } from '../helpers/workspace.js';

const temp = new TempDirs();
let svc: TestService;
let client: TestClient;
serviceForEachTest(temp, (s, c) => ((svc = s), (client = c)));

const SECRET = 'kept outside the workspace\n';

/** Every object in the service's stores, as text, to look for the secret in. */
function storeContents(): string {
  const stores: string[] = [];
  const find = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory() && e.name === 'shadow.git') stores.push(join(dir, e.name));
      else if (e.isDirectory()) find(join(dir, e.name));
    }
  };
  find(svc.stateDir);
  return stores
    .map((gitDir) => execFileSync('git', ['--git-dir', gitDir, 'cat-file', '--batch-all-objects', '--batch'], { encoding: 'latin1', maxBuffer: 1 << 28 }))
    .join('\n');
}

describe('operation planning reads only inside the working directories', () => {
  it('refuses a revert, dry run included, when a folder of the turn was swapped for a link outside, and reads nothing there', async () => {
    const dir = temp.make('cs-plan-reads-');
    const outside = temp.make('cs-plan-outside-');
    writeFiles(dir, { 'sub/a.txt': 'one\n', 'b.txt': 'b\n' });
    writeFileSync(join(outside, 'a.txt'), SECRET);
    await client.request('createSession', { channel: 'ahp-session:/plan-reads', workingDirectory: pathToFileURL(dir).href }, { timeoutMs: 60_000 });
    await recordTurn(client, 'ahp-session:/plan-reads', 't1', () => writeFiles(dir, { 'sub/a.txt': 'two\n', 'b.txt': 'B\n' }));
    const turn = 'ahp-changeset:/plan-reads/turn/t1';
    await subscribeReady(client, turn);

    renameSync(join(dir, 'sub'), join(dir, 'sub-moved'));
    symlinkSync(outside, join(dir, 'sub'));
    for (const meta of [{ dryRun: true }, undefined]) {
      const error = await client.requestError(
        'invokeChangesetOperation',
        { channel: turn, operationId: 'revert', ...(meta ? { _meta: meta } : {}) },
        { timeoutMs: 30_000 },
      );
      expect(error.code, JSON.stringify(meta)).toBe(-32009);
      expect(error.message).toContain('outside');
    }
    expect(storeContents()).not.toContain('kept outside the workspace');
  });
});
