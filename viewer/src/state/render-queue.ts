/**
 * Re-rendering by parts: a change marks the parts of the page that show it,
 * and every marked part is drawn once on the next animation frame, however
 * many changes arrived before it.
 */

/** Parts of the page that re-render independently. */
export type Part = 'status' | 'sessions' | 'turns' | 'chips' | 'toolbar' | 'files' | 'diff';

/** The parts waiting for the next frame and the functions that draw them. */
export class RenderQueue {
  private readonly renderers = new Map<Part, () => void>();
  private readonly dirty = new Set<Part>();
  private frame = 0;

  /** Registers the function that draws one part of the page. */
  renderer(part: Part, render: () => void): void {
    this.renderers.set(part, render);
  }

  /** Schedules parts for re-rendering on the next animation frame. */
  invalidate(parts: readonly Part[]): void {
    for (const p of parts) this.dirty.add(p);
    if (this.frame !== 0) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      const due = [...this.dirty];
      this.dirty.clear();
      for (const p of due) this.renderers.get(p)?.();
    });
  }
}
