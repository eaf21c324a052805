import { afterEach, describe, expect, it } from 'vitest';
import { parseServeArgs } from '../../server/cli/serve-args.js';
import { formatStatus } from '../../server/cli/status-command.js';
import type { StatusResult } from '../../server/harness/status.js';
import { run as inProcess } from '../helpers/cli-in-process.js';
import { makeRepo, TempDirs } from '../helpers/workspace.js';
import { run, startServe, type ServeProcess } from './serve-process.js';
import { UsageError } from '../../server/client/errors.js';

describe('store budget and retention settings', () => {
  it('reads sizes with decimal and binary units, and days', () => {
    expect(parseServeArgs(['--store-budget', '500MB']).storeBudgetBytes).toBe(500_000_000);
    expect(parseServeArgs(['--store-budget=2GiB']).storeBudgetBytes).toBe(2 * 1024 ** 3);
    expect(parseServeArgs(['--store-budget', '1.5g']).storeBudgetBytes).toBe(1.5 * 1024 ** 3);
    expect(parseServeArgs(['--store-budget', '4096']).storeBudgetBytes).toBe(4096);
    expect(parseServeArgs(['--retain-days', '30']).retainDays).toBe(30);
    expect(parseServeArgs(['--retain-days', '0.5']).retainDays).toBe(0.5);
    expect(parseServeArgs([])).toMatchObject({ storeBudgetBytes: undefined, retainDays: undefined });
  });

  it('takes them from the environment unless a flag gives them', () => {
    const env = { CHANGESET_SERVER_STORE_BUDGET: '750MiB', CHANGESET_SERVER_RETAIN_DAYS: '14' };
    expect(parseServeArgs([], env)).toMatchObject({ storeBudgetBytes: 750 * 1024 ** 2, retainDays: 14 });
    expect(parseServeArgs(['--store-budget', '1GB', '--retain-days', '2'], env)).toMatchObject({ storeBudgetBytes: 1e9, retainDays: 2 });
  });

  it('refuses bad values, naming the flag or variable and what it expects', () => {
    const refusal = (argv: string[], env: NodeJS.ProcessEnv = {}): string => {
      try {
        parseServeArgs(argv, env);
      } catch (error) {
        expect(error).toBeInstanceOf(UsageError);
        return (error as Error).message;
      }
      throw new Error(`accepted ${argv.join(' ')}`);
    };
    expect(refusal(['--store-budget', 'lots'])).toBe('--store-budget must be a size like 500MB, 2GiB or a number of bytes, got "lots"');
    expect(refusal(['--store-budget', '5 parsecs'])).toMatch(/^--store-budget must be a size like 500MB/);
    expect(refusal(['--store-budget', '-1GB'])).toMatch(/^--store-budget must be a size/);
    expect(refusal(['--store-budget', '0'])).toBe('--store-budget must be a size of at least 1 byte, got "0"');
    expect(refusal(['--store-budget'])).toBe('--store-budget needs a value');
    expect(refusal(['--retain-days', '0'])).toBe('--retain-days must be a positive number of days, got "0"');
    expect(refusal(['--retain-days', 'week'])).toMatch(/^--retain-days must be a positive number of days/);
    expect(refusal([], { CHANGESET_SERVER_STORE_BUDGET: '2 gigs' })).toMatch(/^CHANGESET_SERVER_STORE_BUDGET must be a size like 500MB/);
    expect(refusal([], { CHANGESET_SERVER_RETAIN_DAYS: '-3' })).toMatch(/^CHANGESET_SERVER_RETAIN_DAYS must be a positive number of days/);
  });
});

describe('status', () => {
  it('shows each store against its budget and what retention last did', () => {
    const status = {
      sessions: [
        {
          channel: 'ahp-session:/s',
          chat: 'ahp-chat:/s',
          title: 'work',
          workingDirectories: ['/w'],
          createdAt: '2026-01-01T00:00:00.000Z',
          turnCount: 0,
          turns: [],
          stores: [
            {
              dir: '/w',
              bytes: 300 * 1024 ** 2,
              budgetBytes: 500 * 1024 ** 2,
              lastRetention: {
                at: '2026-01-02T00:00:00.000Z',
                bytesBefore: 600 * 1024 ** 2,
                bytesAfter: 300 * 1024 ** 2,
                sessionsDropped: 2,
                sessionsKept: 1,
                objectsRemoved: 1234,
                packsBefore: 17,
                packsAfter: 1,
                overBudget: false,
              },
            },
          ],
        },
      ],
    } as unknown as StatusResult;
    const text = formatStatus(status);
    expect(text).toContain('  store:       300.0 MiB of 500.0 MiB (/w)');
    expect(text).toContain(
      '  retention:   2026-01-02T00:00:00.000Z: 600.0 MiB → 300.0 MiB, 2 ended sessions dropped, 1 kept (nothing of theirs removable yet), 1234 stored objects removed, 17 → 1 pack file',
    );
  });
});

describe('serve with store settings', () => {
  const temp = new TempDirs();
  let serve: ServeProcess | undefined;

  afterEach(async () => {
    await serve?.stop('SIGKILL');
    serve = undefined;
    temp.cleanup();
  });

  it('applies the budget from the environment and shows it in status', async () => {
    const workspace = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const state = temp.make();
    serve = await startServe([workspace, '--state-dir', state], { CHANGESET_SERVER_STORE_BUDGET: '500MB' });
    const result = await inProcess(['status', '--json', '--state-dir', state], { cwd: workspace });
    const status = JSON.parse(result.stdout) as StatusResult;
    expect(status.sessions[0]!.stores[0]).toMatchObject({ budgetBytes: 500_000_000 });
  });

  it('exits with code 2 and says why on a bad budget', async () => {
    const result = await run(['serve', temp.make(), '--state-dir', temp.make(), '--store-budget', 'huge']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--store-budget must be a size like 500MB, 2GiB or a number of bytes, got "huge"');
  });
});
