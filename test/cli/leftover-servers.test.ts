import { spawn } from 'node:child_process';
import { describe, expect } from 'vitest';
import { findServerFor, isProcessAlive } from '../../server/registry/index.js';
import { endLeftoverServers } from '../helpers/leftover-servers.js';
import { it } from '../helpers/per-test.js';
import { waitFor } from '../hook/hook-fixtures.js';
import { BIN, startServe } from './serve-process.js';

describe('a test file that leaves a server running', () => {
  it('is told which, and the servers are killed: one it started, and one started in the background over a directory it made', async ({ temp }) => {
    const started = await startServe([temp.make('cs-left-ws-'), '--state-dir', temp.make('cs-left-state-'), '--no-session']);
    // What the hook does: a detached server, no longer a child of the test's process once its parent exits.
    const workspace = temp.make('cs-left-ws-');
    const state = temp.make('cs-left-state-');
    const background = spawn(process.execPath, [BIN, 'serve', workspace, '--no-session', '--state-dir', state], { detached: true, stdio: 'ignore' });
    background.unref();
    const entry = await waitFor(() => findServerFor(state, workspace), 'the background server to register');

    const left = await endLeftoverServers(0);
    expect(left).toHaveLength(2);
    expect(left.join('\n')).toContain(`pid ${started.child.pid}: `);
    expect(left.join('\n')).toContain(`pid ${entry.pid}: ${BIN} serve ${workspace} --no-session --state-dir ${state}`);
    await waitFor(async () => (isProcessAlive(started.child.pid!) || isProcessAlive(entry.pid) ? undefined : true), 'both servers to be gone');
    // Nothing left for the check after the file.
    expect(await endLeftoverServers(0)).toEqual([]);
  });
});
