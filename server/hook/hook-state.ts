import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** What the hook remembers between events of one Claude Code session. */
export interface ClaudeSessionState {
  /** The turn being recorded, when the hook started one. */
  turnId?: string;
}

/** `<stateDir>/hooks/claude`: one small file per Claude Code session. */
export function hookStateDir(stateDir: string): string {
  return join(stateDir, 'hooks', 'claude');
}

function statePath(stateDir: string, sessionId: string): string {
  return join(hookStateDir(stateDir), `${sessionId}.json`);
}

export async function readSessionState(stateDir: string, sessionId: string): Promise<ClaudeSessionState> {
  try {
    const value = JSON.parse(await readFile(statePath(stateDir, sessionId), 'utf8')) as Record<string, unknown>;
    return typeof value['turnId'] === 'string' ? { turnId: value['turnId'] } : {};
  } catch {
    return {};
  }
}

export async function writeSessionState(stateDir: string, sessionId: string, state: ClaudeSessionState): Promise<void> {
  await mkdir(hookStateDir(stateDir), { recursive: true, mode: 0o700 });
  const path = statePath(stateDir, sessionId);
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(state)}\n`, { mode: 0o600 });
  await rename(tmp, path);
}

export async function removeSessionState(stateDir: string, sessionId: string): Promise<void> {
  await rm(statePath(stateDir, sessionId), { force: true });
}
