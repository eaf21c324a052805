import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** What the hook remembers between events of one agent session. */
export interface HookSessionState {
  /** The turn being recorded, when the hook started one. */
  turnId?: string;
}

/** `<stateDir>/hooks/<agent>`: one small file per session of that agent. */
function hookStateDir(stateDir: string, agent: string): string {
  return join(stateDir, 'hooks', agent);
}

function statePath(stateDir: string, agent: string, sessionId: string): string {
  return join(hookStateDir(stateDir, agent), `${sessionId}.json`);
}

export async function readSessionState(stateDir: string, agent: string, sessionId: string): Promise<HookSessionState> {
  try {
    const value = JSON.parse(await readFile(statePath(stateDir, agent, sessionId), 'utf8')) as Record<string, unknown>;
    return typeof value['turnId'] === 'string' ? { turnId: value['turnId'] } : {};
  } catch {
    return {};
  }
}

export async function writeSessionState(stateDir: string, agent: string, sessionId: string, state: HookSessionState): Promise<void> {
  await mkdir(hookStateDir(stateDir, agent), { recursive: true, mode: 0o700 });
  const path = statePath(stateDir, agent, sessionId);
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(state)}\n`, { mode: 0o600 });
  await rename(tmp, path);
}

export async function removeSessionState(stateDir: string, agent: string, sessionId: string): Promise<void> {
  await rm(statePath(stateDir, agent, sessionId), { force: true });
}
