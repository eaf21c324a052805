/**
 * A scrolling element's position and size as the page last reported them
 * (its scroll events and a resize observer), so that drawing it reads them
 * without forcing a layout of a page it has just changed. Writing the
 * position still lays the page out once, so it is written only when it
 * changes.
 */
export class ScrollBox {
  /** `scrollTop`, as last reported or written. */
  top = 0;
  /** The content box's size, as the resize observer last reported it (0 until it has). */
  width = 0;
  height = 0;

  constructor(
    readonly el: HTMLElement,
    onScroll: () => void,
    onResize: () => void,
  ) {
    el.addEventListener(
      'scroll',
      () => {
        this.top = el.scrollTop;
        onScroll();
      },
      { passive: true },
    );
    new ResizeObserver((entries) => {
      const box = entries[entries.length - 1]!.contentRect;
      this.width = box.width;
      this.height = box.height;
      onResize();
    }).observe(el);
  }

  /** The visible height (read from the page only until the resize observer has reported it). */
  get viewHeight(): number {
    return this.height || this.el.clientHeight || window.innerHeight;
  }

  /** Scrolls to `top` (in whole pixels, as the page keeps it), clamped to [0, `max`], unless it is there already; returns where it is. */
  scrollTo(top: number, max: number): number {
    const target = Math.round(Math.max(0, Math.min(top, max)));
    if (target !== this.top) {
      this.el.scrollTop = target;
      // Where the page put it (the write laid the page out, so reading costs no layout): short of `target` when the content is shorter.
      this.top = this.el.scrollTop;
    }
    return this.top;
  }

  /** The content shrank to `max`: the browser clamps the position, and so does this copy of it. */
  clamp(max: number): void {
    this.top = Math.max(0, Math.min(this.top, max));
  }

  /** The element was put back into the page, which starts it at the top. */
  reattached(): void {
    this.top = 0;
  }
}
