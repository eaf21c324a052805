import { type Disposable, toDisposable } from '../events.js';
import type { ChangesetService } from '../service.js';

/**
 * Calls `onIdle` once no session has a turn being recorded and no client is
 * connected, continuously for `idleMs`. Sessions stay resumable: stopping
 * records nothing away. Disposing the result stops watching.
 */
export function watchIdle(service: ChangesetService, idleMs: number, onIdle: () => void): Disposable {
  let idleSince = Date.now();
  const busy = () => service.server.connectionCount > 0 || service.sessions.list().some((s) => s.activeTurnId !== undefined);
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
