import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** `<stateDir>/logs`: where the hook and the servers it starts write. */
export function logDir(stateDir: string): string {
  return join(stateDir, 'logs');
}

/**
 * Appends one line to `<stateDir>/logs/hook.log`. Synchronous, so the line
 * is on disk even when the hook exits right after; failures are swallowed
 * (the hook must never fail the agent).
 */
export function hookLog(stateDir: string, line: string): void {
  try {
    mkdirSync(logDir(stateDir), { recursive: true, mode: 0o700 });
    appendFileSync(join(logDir(stateDir), 'hook.log'), `${new Date().toISOString()} [${process.pid}] ${line}\n`, { mode: 0o600 });
  } catch {
    // nowhere to log
  }
}
