/**
 * Re-rendering by parts: a change marks the parts of the page that show it,
 * and every marked part is drawn once on the next animation frame, however
 * many changes arrived before it.
 */
import { heldByPress } from '../press-hold.js';

/** Parts of the page that re-render independently. */
export type Part = 'status' | 'sessions' | 'turns' | 'chips' | 'toolbar' | 'files' | 'diff';

/** The parts waiting for the next frame and the functions that draw them. */
export class RenderQueue {
  private readonly renderers = new Map<Part, () => void>();
  private readonly dirty = new Set<Part>();
  private frame = 0;
  private held = false;

  /**
   * Draws nothing until `ready` settles, or `maxMs` passed: a frame drawn
   * just before what it is waiting for would be laid out and painted twice
   * (the page's first screen of diffs is a few milliseconds away when a
   * changeset's files arrive; without the hold the first frame shows them
   * loading and the next, after a whole layout, shows them).
   */
  hold(ready: Promise<unknown>, maxMs: number): void {
    this.held = true;
    const release = (): void => {
      if (!this.held) return;
      this.held = false;
      if (this.dirty.size > 0) this.invalidate([]);
    };
    void ready.finally(release);
    setTimeout(release, maxMs);
  }

  /** Registers the function that draws one part of the page. */
  renderer(part: Part, render: () => void): void {
    this.renderers.set(part, render);
  }

  /** Schedules parts for re-rendering on the next animation frame. */
  invalidate(parts: readonly Part[]): void {
    for (const p of parts) this.dirty.add(p);
    if (this.frame !== 0 || this.held) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      if (this.held || heldByPress(() => this.invalidate([]))) return;
      const due = [...this.dirty];
      this.dirty.clear();
      for (const p of due) this.renderers.get(p)?.();
    });
  }
}
