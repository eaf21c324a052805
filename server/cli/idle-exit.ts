import { existsSync } from 'node:fs';
import { type Disposable, toDisposable } from '../events.js';
import type { RecordingSession } from '../session/recording-session.js';
import type { ChangesetService } from '../service.js';

/**
 * Calls `onIdle` once no session has a turn being recorded (in a working
 * directory that still exists) and no client is connected, continuously for
 * `idleMs`. Sessions stay resumable: stopping
 * records nothing away. Disposing the result stops watching.
 */
export function watchIdle(service: ChangesetService, idleMs: number, onIdle: () => void): Disposable {
  let idleSince = Date.now();
  // A turn whose working directories are all gone records nothing more: it does not keep the server running.
  const recording = (s: RecordingSession): boolean => s.activeTurnId !== undefined && s.workingDirectories.some((dir) => existsSync(dir));
  const busy = () => service.server.connectionCount > 0 || service.sessions.list().some(recording);
  const tick = (): void => {
    if (busy()) idleSince = Date.now();
    else if (Date.now() - idleSince >= idleMs) {
      clearInterval(timer);
      onIdle();
    }
  };
  const timer = setInterval(tick, Math.max(50, Math.min(idleMs / 4, 5000)));
  timer.unref();
  return toDisposable(() => clearInterval(timer));
}
