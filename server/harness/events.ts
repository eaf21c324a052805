import { EventEmitter } from 'node:events';
import type { RecordingSession } from '../session/recording-session.js';
import type { SessionManager } from '../session/session-manager.js';

/** Events of the harness methods served for one session manager. */
export interface HarnessEventMap {
  /**
   * A harness asked for a turn on this session; emitted synchronously before
   * the turn is queued, so a listener can queue work ahead of it (automatic
   * turns hand over here).
   */
  turnStarting: [RecordingSession];
}

const emitters = new WeakMap<SessionManager, EventEmitter<HarnessEventMap>>();

/** The harness events of the methods registered for `sessions`. */
export function harnessEvents(sessions: SessionManager): EventEmitter<HarnessEventMap> {
  let emitter = emitters.get(sessions);
  if (!emitter) {
    emitter = new EventEmitter<HarnessEventMap>();
    emitters.set(sessions, emitter);
  }
  return emitter;
}
