import { Emitter } from '../events.js';
import type { UserAction } from './timeline.js';
import type { TurnRecord } from './turn-record.js';

/** The sources of a recording session's events (see the `on…` members of `RecordingSession`). */
export class SessionEmitters {
  readonly turnEnded = new Emitter<TurnRecord>();
  readonly ended = new Emitter<void>();
  readonly disposed = new Emitter<void>();
  readonly userAction = new Emitter<UserAction>();
  readonly retentionDropped = new Emitter<string[]>();
  readonly warning = new Emitter<string>();

  /** Lets every listener go. */
  dispose(): void {
    for (const emitter of [this.turnEnded, this.ended, this.disposed, this.userAction, this.retentionDropped, this.warning]) emitter.dispose();
  }
}
