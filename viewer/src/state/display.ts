/**
 * How diffs are drawn: unified or side by side (side by side falls back to
 * unified while the pane is too narrow for two columns of code), every file
 * on one page or one at a time (remembered), and the context lines asked
 * for around each change.
 */
import { loadPreference, savePreference } from '../preferences.js';
import type { Part } from './render-queue.js';

/** How diffs are drawn. */
export type DiffMode = 'unified' | 'split';

/** All files of a changeset on one scrolling page, or the selected file alone. */
export type Layout = 'all' | 'file';

/** The diff display settings; a change re-renders the parts that show it. */
export class DiffDisplay {
  /** Unified or side-by-side diffs. */
  mode: DiffMode = 'unified';
  private chosenLayout: Layout | undefined;
  /** Context lines requested around each change. */
  context = 3;
  /** True while the diff pane is too narrow for two columns of code. */
  narrow = false;

  constructor(private readonly changed: (...parts: Part[]) => void) {}

  /** The review page or one file at a time (remembered; read when first needed, not while the page connects). */
  get layout(): Layout {
    return (this.chosenLayout ??= loadPreference<Layout>('layout', ['all', 'file'], 'all'));
  }

  /** The layout diffs are drawn in: side by side falls back to unified in a narrow pane. */
  get effectiveMode(): DiffMode {
    return this.mode === 'split' && this.narrow ? 'unified' : this.mode;
  }

  /** Switches between unified and side-by-side diffs. */
  setMode(mode: DiffMode): void {
    if (mode === this.mode) return;
    this.mode = mode;
    this.changed('toolbar', 'diff');
  }

  /** Switches between the review page and one file at a time. */
  setLayout(layout: Layout): void {
    if (layout === this.layout) return;
    this.chosenLayout = layout;
    savePreference('layout', layout);
    this.changed('toolbar', 'diff');
  }

  /** Changes the context lines requested around changes. */
  setContext(context: number): void {
    if (context === this.context) return;
    this.context = context;
    this.changed('toolbar', 'diff');
  }
}
