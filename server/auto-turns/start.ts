import { harnessEvents } from '../harness/events.js';
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
  const events = harnessEvents(sessions);
  const onTurnStarting = (target: RecordingSession): void => {
    if (target !== session) return;
    events.off('turnStarting', onTurnStarting);
    auto.handOver();
  };
  events.on('turnStarting', onTurnStarting);
  session.once('disposed', () => events.off('turnStarting', onTurnStarting));
  auto.start();
  return auto;
}
