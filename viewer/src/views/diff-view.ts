/**
 * The diff of the selected file, unified or side by side, from the
 * `changesetFileDiff` command. Changed words are marked within changed
 * lines; unchanged regions between hunks are collapsed into rows that
 * expand with the file's full text (read with `resourceRead` from the edit's
 * content reference). Hunks carry the range-scoped operations, the header
 * the resource-scoped ones and the "Viewed" checkbox.
 */
import type { ChangesetFile, ResourceReadResult, URI } from '../../../protocol/index.js';
import type { App } from '../app.js';
import { buildHunk, gapLines, gapsOf, hunkRange, splitText, type DiffLine, type Gap } from '../diff-model.js';
import { byId, h, replaceChildren, type Child } from '../dom.js';
import { fileOperations, lineCounts, renamedFrom, resourceOf, revertedBadge } from '../file-header-parts.js';
import { displayPathOf, kindOf, type FileMeta } from '../files-model.js';
import { codeNodes } from '../code-cell.js';
import { highlightHunks, tokensOf } from '../highlight/highlighter.js';
import { operationButton, operationsFor } from '../operations.js';
import type { FileDiffEntry } from '../review/diff-store.js';
import { hasTail } from '../review/review-rows.js';
import { filterNote, NO_LINE_CHANGES, noTextNote } from '../diff-notes.js';
import { viewedElsewhere } from '../viewed.js';
import { fileHabits } from '../history/file-history.js';
import { commentsOf, type Placed } from '../comments/comment-store.js';
import { commentBlock, composerBlock } from '../comments/comment-rows.js';
import { blameToggle, drawBlame } from '../blame/blame-gutter.js';

/** Lines drawn before the rest of a very large diff waits behind a button (keeps the page responsive). */
const LINE_BUDGET = 4000;

/** One file's diff as the one-file view holds it: what the review page holds, and whether to draw past the line budget. */
interface Loaded extends Omit<FileDiffEntry, 'loaded'> {
  /** Draw everything even past the line budget. */
  unbounded: boolean;
}

/** The diff pane. */
export class DiffView {
  private readonly pane = byId('diff');
  private readonly cache = new Map<string, Loaded>();

  private revealedLine: string | undefined;

  constructor(private readonly app: App) {
    // Line numbers are links: clicking one puts the line in the address.
    this.pane.addEventListener('click', (event) => {
      // A line number's "+" opens the box to comment on the line (Shift: stretches an open box to it).
      const plus = (event.target as HTMLElement).closest<HTMLElement>('.add-comment');
      const at = plus?.dataset['commentLine'];
      const selected = this.app.selectedFile;
      if (plus && at && selected) {
        event.stopPropagation();
        commentsOf(this.app).startOnLine(selected.id, displayPathOf(selected), at[0] === 'L' ? 'before' : 'after', Number(at.slice(1)), event.shiftKey);
        return;
      }
      const cell = (event.target as HTMLElement).closest<HTMLElement>('td.num[data-line]');
      const file = this.app.selectedFile;
      if (cell && file) this.app.selectFile(file.id, 'pick', cell.dataset['line']);
    });
  }

  /** Draws the selected file (fetching its diff when not loaded yet). */
  render(): void {
    const app = this.app;
    const open = app.open;
    const file = app.selectedFile;
    if (!open || !file) {
      const files = app.changeset?.files.length ?? 0;
      replaceChildren(this.pane, h('p', { class: 'empty' }, files > 0 ? 'Select a file (j / k) to see its diff.' : ''));
      // Nothing to wait for without a changeset, or with one of no files; a file is about to be selected otherwise.
      const state = app.changeset;
      app.screenDrawn(!open || (state !== undefined && state.status !== 'computing' && files === 0));
      return;
    }
    const key = `${open.uri}\n${file.id}\n${app.display.context}`;
    let loaded = this.cache.get(key);
    if (loaded && loaded.edit === file.edit && loaded.epoch !== app.diffEpoch) {
      // Today's files may have changed since (a revert, a turn): asked for again, the diff known so far shown meanwhile.
      loaded.epoch = app.diffEpoch;
      void this.fetch(open.uri, file, loaded, key);
    }
    if (!loaded || loaded.edit !== file.edit) {
      const previous = loaded;
      loaded = { edit: file.edit, expanded: new Set(), unbounded: false, epoch: app.diffEpoch };
      this.cache.set(key, loaded);
      void this.fetch(open.uri, file, loaded, key);
      // Keep expanded regions when only the review flag or counts changed the object identity.
      if (previous && previous.edit.after?.content === file.edit.after?.content && previous.edit.before?.content === file.edit.before?.content) {
        loaded.expanded = previous.expanded;
      }
    }
    const note = filterNote(((file._meta ?? {}) as FileMeta).filterNotRun);
    replaceChildren(this.pane, this.header(open.uri, file), note ? h('p', { class: 'note file-note' }, note) : null, this.body(open.uri, file, loaded));
    drawBlame(app, this.pane, open.uri, file);
    this.markLine(`${key}\n${app.selectedLine ?? ''}`);
    app.screenDrawn(loaded.diff !== undefined || loaded.error !== undefined);
  }

  /** Marks the linked line and scrolls it into view the first time it is drawn. */
  private markLine(key: string): void {
    const line = this.app.selectedLine;
    if (line === undefined) return;
    const cell = this.pane.querySelector(`td.num[data-line="${line}"]`);
    const row = cell?.closest('tr');
    if (!row) return;
    row.classList.add('linked');
    if (this.revealedLine !== key) {
      this.revealedLine = key;
      row.scrollIntoView({ block: 'center' });
    }
  }

  private async fetch(channel: URI, file: ChangesetFile, loaded: Loaded, key: string): Promise<void> {
    try {
      const diff = await this.app.client.request('changesetFileDiff', { channel, fileId: file.id, context: this.app.display.context });
      loaded.diff = diff;
      if (diff.kind === 'text') {
        const hunks = diff.hunks.map(buildHunk);
        loaded.hunks = hunks;
        void highlightHunks(displayPathOf(file), hunks).then((done) => done && this.cache.get(key) === loaded && this.app.invalidate('diff'));
      }
    } catch (error) {
      loaded.error = (error as Error).message;
    }
    if (this.cache.get(key) === loaded) this.app.invalidate('diff');
  }

  private header(channel: URI, file: ChangesetFile): HTMLElement {
    const app = this.app;
    const meta = (file._meta ?? {}) as FileMeta;
    const path = displayPathOf(file);
    const kind = kindOf(file);
    return h(
      'header',
      { class: 'diff-header' },
      h('h3', { id: 'diff-title' }, h('span', { class: `kind kind-${kind}` }, kind), ' ', renamedFrom(meta, path), h('span', { class: 'path' }, path)),
      lineCounts(file, meta),
      meta.beforeMode && meta.afterMode && meta.beforeMode !== meta.afterMode
        ? h('span', { class: 'note' }, `mode ${meta.beforeMode} → ${meta.afterMode}`)
        : null,
      viewedElsewhere(app, file),
      fileHabits(app, channel, file),
      blameToggle(app, file),
      fileOperations(app, channel, file, path, 'File operations'),
      app.open?.reviewable
        ? h(
            'label',
            { class: 'viewed-toggle' },
            h('input', {
              type: 'checkbox',
              id: 'viewed-current',
              checked: file.reviewed === true,
              'data-focus-key': 'viewed-current',
              onchange: (e: Event) => app.setViewed(file.id, (e.target as HTMLInputElement).checked),
            }),
            'Viewed',
          )
        : null,
    );
  }

  private body(channel: URI, file: ChangesetFile, loaded: Loaded): HTMLElement {
    const diff = loaded.diff;
    if (loaded.error) return h('p', { class: 'error', role: 'alert' }, `Could not load the diff: ${loaded.error}`);
    if (!diff) return h('p', { class: 'empty', role: 'status' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), 'Loading diff…');
    if (diff.kind !== 'text') return h('p', { class: 'placeholder-block' }, noTextNote(diff));
    const hunks = loaded.hunks ?? [];
    if (hunks.length === 0) return h('p', { class: 'empty' }, NO_LINE_CHANGES);
    const split = this.app.display.effectiveMode === 'split';
    // Full-width rows span exactly the layout's columns: an extra implied column would take the width.
    const cols = split ? '4' : '3';
    const gaps = gapsOf(diff.hunks, loaded.text?.length);
    const rows: Child[] = [];
    const notes = this.commentRows(file, Number(cols));
    let budget = loaded.unbounded ? Infinity : LINE_BUDGET;
    const ranged = operationsFor(this.app.changeset?.operations, 'range');
    const resource = resourceOf(file);
    // Expanding needs the new version's text; an added or deleted file is one hunk, with nothing around it.
    const canExpand = file.edit.after !== undefined && file.edit.before !== undefined;
    hunks.forEach((model, i) => {
      if (budget <= 0) return;
      rows.push(this.gapRows(gaps[i]!, i, loaded, file, split, canExpand, notes));
      const hk = model.hunk;
      rows.push(
        h(
          'tr',
          { class: 'hunk-header' },
          h(
            'td',
            { colspan: cols },
            h(
              'span',
              { class: 'hunk-range' },
              `@@ -${hk.oldLines === 0 ? hk.oldStart - 1 : hk.oldStart},${hk.oldLines} +${hk.newLines === 0 ? hk.newStart - 1 : hk.newStart},${hk.newLines} @@`,
            ),
            hk.reverted
              ? revertedBadge()
              : ranged.length > 0 && file.edit.after
                ? h(
                    'span',
                    { class: 'ops', role: 'group', 'aria-label': `Hunk ${i + 1} operations` },
                    ranged.map((op) =>
                      operationButton(this.app, channel, op, {
                        target: { kind: 'range', resource, side: 'after', range: hunkRange(hk) },
                        what: `hunk ${i + 1} of ${displayPathOf(file)}`,
                        compact: true,
                      }),
                    ),
                  )
                : null,
          ),
        ),
      );
      if (split) for (const r of model.rows) rows.push(splitRow(r.left, r.right), notes.under(r.left, r.right));
      else
        for (const line of model.lines)
          rows.push(unifiedRow(line), notes.under(line.kind === 'add' ? undefined : line, line.kind === 'del' ? undefined : line));
      budget -= model.lines.length;
    });
    if (budget <= 0) {
      rows.push(
        h(
          'tr',
          { class: 'gap' },
          h(
            'td',
            { colspan: cols },
            h(
              'button',
              {
                type: 'button',
                class: 'expand',
                onclick: () => {
                  loaded.unbounded = true;
                  this.app.invalidate('diff');
                },
              },
              'Show the whole diff',
            ),
          ),
        ),
      );
    } else {
      rows.push(this.gapRows(gaps[hunks.length]!, hunks.length, loaded, file, split, canExpand && hasTail(file, hunks, this.app.display.context), notes));
    }
    // Comments whose lines are not on screen (folded, or gone) come first.
    rows.unshift(notes.rest());
    return h(
      'table',
      { class: ['diff', split ? 'split' : 'unified'], 'aria-label': `Diff of ${displayPathOf(file)}` },
      split
        ? h('colgroup', {}, h('col', { class: 'num' }), h('col', { class: 'code' }), h('col', { class: 'num' }), h('col', { class: 'code' }))
        : h('colgroup', {}, h('col', { class: 'num' }), h('col', { class: 'num' }), h('col', { class: 'code' })),
      h('tbody', {}, rows),
    );
  }

  /** The collapsed or expanded rows of one unchanged gap. */
  private gapRows(gap: Gap, index: number, loaded: Loaded, file: ChangesetFile, split: boolean, canExpand: boolean, notes: CommentRows): Child {
    if (gap.count === 0) return null;
    if (loaded.expanded.has(index) && loaded.text) {
      return gapLines(gap, loaded.text).map((line) => [split ? splitRow(line, line) : unifiedRow(line), notes.under(line, line)]);
    }
    if (!canExpand) return null;
    const label = gap.count === undefined ? 'Show the rest of the file' : `Expand ${gap.count} unchanged ${gap.count === 1 ? 'line' : 'lines'}`;
    return h(
      'tr',
      { class: 'gap' },
      h(
        'td',
        { colspan: split ? '4' : '3' },
        h(
          'button',
          {
            type: 'button',
            class: 'expand',
            'data-focus-key': `gap:${index}`,
            onclick: () => void this.expand(file, loaded, index),
          },
          '⋯ ',
          label,
        ),
      ),
    );
  }

  /** The review comments of the file (and the box being written on it), handed out under the lines they end on. */
  private commentRows(file: ChangesetFile, cols: number): CommentRows {
    const store = commentsOf(this.app);
    const left = new Set<Placed>(store.placedOn(displayPathOf(file)));
    const d = store.draft;
    let draft = d?.kind === 'lines' && d.fileId === file.id ? d : undefined;
    const row = (el: HTMLElement): HTMLElement => {
      el.style.height = '';
      return h('tr', { class: 'comment-row' }, h('td', { colspan: String(cols) }, el));
    };
    const block = (p: Placed): HTMLElement => row(commentBlock(store, p, 1, 0));
    const composer = (): HTMLElement => row(composerBlock(store));
    return {
      under: (before, after) => {
        const out: HTMLElement[] = [];
        const on = (side: 'before' | 'after', end: number): boolean =>
          side === 'before' ? before?.oldNo === end && before.kind !== 'add' : after?.newNo === end && after.kind !== 'del';
        for (const p of left) {
          if (p.atTop || !on(p.side, p.endLine)) continue;
          left.delete(p);
          out.push(block(p));
        }
        if (draft && on(draft.side, draft.endLine)) {
          draft = undefined;
          out.push(composer());
        }
        return out;
      },
      rest: () => {
        const out = [...left].map(block);
        if (draft) out.push(composer());
        return out;
      },
    };
  }

  private async expand(file: ChangesetFile, loaded: Loaded, index: number): Promise<void> {
    if (!loaded.text) {
      const content = (await this.app.allFiles.withContent(this.app.open?.uri ?? '', file))?.edit.after?.content;
      if (!content) return;
      try {
        const result = await this.app.client.request('resourceRead', { channel: 'ahp-root://', uri: content });
        loaded.text = splitText(decode(result, loaded.diff?.kind === 'text' ? loaded.diff.encoding : 'utf-8'));
      } catch (error) {
        this.app.say({ tone: 'error', text: `Could not read the file: ${(error as Error).message}` });
        return;
      }
    }
    loaded.expanded.add(index);
    this.app.invalidate('diff');
  }
}

/** Hands out a file's comment rows under the lines they end on; `rest` gives those whose lines were not drawn. */
interface CommentRows {
  under(before: DiffLine | undefined, after: DiffLine | undefined): HTMLElement[];
  rest(): HTMLElement[];
}

function decode(result: ResourceReadResult, encoding: string): string {
  if (result.encoding === 'utf-8') return result.data;
  const binary = atob(result.data);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return new TextDecoder(encoding === 'latin1' ? 'latin1' : 'utf-8').decode(bytes);
}

const SIGN = { add: '+', del: '−', context: ' ' } as const;

/** A line's text with its changed words wrapped in marks. */
function code(line: DiffLine): HTMLElement {
  const cell = h('td', { class: `code ${line.kind}` }, h('span', { class: 'sign', 'aria-hidden': 'true' }, SIGN[line.kind]));
  cell.append(...codeNodes(line.text, line.words, line.kind, tokensOf(line)));
  if (line.noNewline) cell.append(h('span', { class: 'no-newline', title: 'No newline at end of file' }, ' ⏎̸'));
  return cell;
}

function num(n: number | undefined, kind: string, side: 'L' | 'R'): HTMLElement {
  // The "+" that opens a comment on the line (shown on hover and focus; Shift+click stretches the comment to more lines).
  const plus =
    n === undefined
      ? null
      : h(
          'button',
          {
            type: 'button',
            class: 'add-comment',
            'data-comment-line': `${side}${n}`,
            'aria-label': `Comment on ${side === 'L' ? 'old' : 'new'} line ${n}`,
            title: 'Comment on this line',
          },
          '+',
        );
  return h(
    'td',
    { class: `num ${kind}`, 'data-line': n === undefined ? undefined : `${side}${n}`, title: n === undefined ? undefined : 'Link to this line' },
    plus,
    n === undefined ? '' : String(n),
  );
}

function unifiedRow(line: DiffLine): HTMLElement {
  return h('tr', { class: `line ${line.kind}` }, num(line.oldNo, line.kind, 'L'), num(line.newNo, line.kind, 'R'), code(line));
}

function splitRow(left: DiffLine | undefined, right: DiffLine | undefined): HTMLElement {
  const empty = (): HTMLElement[] => [h('td', { class: 'num empty' }), h('td', { class: 'code empty' })];
  return h(
    'tr',
    { class: 'line' },
    left ? [num(left.oldNo, left.kind, 'L'), code(left)] : empty(),
    right ? [num(right.newNo, right.kind, 'R'), code(right)] : empty(),
  );
}
