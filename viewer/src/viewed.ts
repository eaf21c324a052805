/**
 * "Viewed" across views. Each changeset keeps its own review ticks (the
 * session view, a turn's view and a comparison each have theirs, and the
 * server clears a tick when the file's content changes), so the same file
 * can be ticked in one and not in another. Where the page knows both, the
 * file says so and offers to match; "Mark all viewed" ticks every shown file.
 */
import type { ChangesetFile, ChangesetState, URI } from '../../protocol/index.js';
import type { App } from './app.js';
import { isStatic } from './state/changeset-views.js';
import { h } from './dom.js';
import { displayPathOf } from './files-model.js';
import { turnName } from './operation-preview.js';

const WHY =
  'Each view keeps its own "Viewed" ticks: ticking a file in one view does not tick it in another, and a tick is cleared when the file changes again.';

/** A name for another mirrored changeset of the session. */
function viewName(app: App, uri: URI): string | undefined {
  const entry = app.catalogue.find((c) => isStatic(c) && c.uriTemplate === uri);
  if (entry) return entry.label;
  const turnEntry = app.catalogue.find((c) => c.changeKind === 'turn');
  const turn = turnEntry ? app.chat?.turns.find((t) => uri === turnEntry.uriTemplate.replace('{turnId}', encodeURIComponent(t.id))) : undefined;
  return turn ? `the view of ${turnName(app, turn.id)}` : undefined;
}

/** Other views of the session the page mirrors where this file's tick differs. */
function differingViews(app: App, file: ChangesetFile): { uri: URI; name: string; reviewed: boolean }[] {
  const open = app.open;
  if (!open?.reviewable) return [];
  const path = displayPathOf(file);
  const out: { uri: URI; name: string; reviewed: boolean }[] = [];
  for (const uri of app.client.mirror.uris()) {
    if (uri === open.uri || !uri.startsWith('ahp-changeset:')) continue;
    const state = app.client.mirror.state(uri, 'changeset') as ChangesetState | undefined;
    const other = state?.files.find((f) => f.id === file.id) ?? state?.files.find((f) => displayPathOf(f) === path);
    if (!other || (other.reviewed === true) === (file.reviewed === true)) continue;
    const name = viewName(app, uri);
    if (name) out.push({ uri, name, reviewed: other.reviewed === true });
  }
  return out;
}

/** A note when the file's "Viewed" tick differs in another view, with a button to match it here; null when it does not. */
export function viewedElsewhere(app: App, file: ChangesetFile): HTMLElement | null {
  const [first] = differingViews(app, file);
  if (!first) return null;
  const text = first.reviewed ? `Viewed in ${first.name}` : `Not viewed in ${first.name}`;
  return h(
    'span',
    { class: 'viewed-elsewhere', title: WHY },
    h('span', { class: 'badge', title: `${text}. ${WHY}` }, text),
    h(
      'button',
      {
        type: 'button',
        class: 'op-compact',
        title: `${first.reviewed ? 'Tick here too' : 'Untick here too'}, as in ${first.name}`,
        'data-focus-key': `match:${file.id}`,
        onclick: () => app.setViewed(file.id, first.reviewed),
      },
      first.reviewed ? 'Tick here too' : 'Untick here too',
    ),
  );
}

/** Most files one "Mark all viewed" action names. */
const MARK_CHUNK = 2000;

/** The toolbar button ticking every file the filter shows. */
export function markAllViewed(app: App): HTMLElement | null {
  if (!app.open?.reviewable) return null;
  const shown = app.rows.flatMap((r) => (r.type === 'file' ? [r.file] : []));
  const pending = shown.filter((f) => f.reviewed !== true).map((f) => f.id);
  const filtered = shown.length !== (app.changeset?.files.length ?? 0);
  const open = app.open;
  return h(
    'button',
    {
      type: 'button',
      id: 'mark-all-viewed',
      title: `${filtered ? 'Tick every file the filter shows' : 'Tick every file'} as viewed. ${WHY}`,
      disabled: pending.length === 0,
      'data-focus-key': 'mark-all-viewed',
      onclick: () => {
        // In actions of at most 2,000 files: each stays a small frame, also at 50,000 files.
        for (let i = 0; i < pending.length; i += MARK_CHUNK)
          app.client.dispatch(open.uri, { type: 'changeset/filesReviewChanged', files: pending.slice(i, i + MARK_CHUNK), reviewed: true });
      },
    },
    filtered ? `Mark ${shown.length} shown viewed` : 'Mark all viewed',
  );
}
