import { once } from '../events.js';
import type { RecordingSession } from '../session/recording-session.js';
import type { SessionManager } from '../session/session-manager.js';
import { AutoTurns, type AutoTurnsOptions } from './auto-turns.js';

/**
 * Starts automatic turns for one session of a manager. A harness calling
 * `harness/turnStarted` on that session takes over: the automatic turn in
 * progress ends and no more are recorded for it.
 */
export function startAutoTurns(sessions: SessionManager, session: RecordingSession, options: Omit<AutoTurnsOptions, 'session'>): AutoTurns {
  const auto = new AutoTurns({ ...options, session });
  const handOver = sessions.onTurnRequested((target) => {
    if (target !== session) return;
    handOver.dispose();
    auto.handOver();
  });
  once(session.onDisposed, () => handOver.dispose());
  auto.start();
  return auto;
}
