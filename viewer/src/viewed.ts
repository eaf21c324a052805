/** Review ticks across views (filled in with the viewed-state explanation). */
import type { ChangesetFile } from '../../protocol/index.js';
import type { App } from './app.js';

/** A note when the file's "Viewed" tick differs in another open view; null when it does not. */
export function viewedElsewhere(_app: App, _file: ChangesetFile): HTMLElement | null {
  return null;
}
