/**
 * Deep links: the address bar holds what is on screen — session, changeset
 * (a catalogue entry, a turn, a comparison of two turns, a step), file and
 * line — so a reload, back / forward and a shared link all come back to the
 * same view. Picking something pushes a history entry; the selection that
 * follows scrolling only replaces the current one.
 */
import type { App } from './app.js';
import { isStatic } from './state/changeset-views.js';
import { expandChangesetUri } from '../../protocol/changeset/uris.js';
import { displayPathOf } from './files-model.js';

const SESSION_PREFIX = 'ahp-session:/';
const CHANGESET_PREFIX = 'ahp-changeset:/';

/** What a viewer address names; every part is optional. */
export interface ViewLocation {
  /** Session id (the path of `ahp-session:/<id>`). */
  session?: string;
  /** A static catalogue entry, by its URI after the session (`session`, `uncommitted`, `dir/1/branch`). */
  view?: string;
  /** A turn's changeset. */
  turn?: string;
  /** A step of `turn`, when the session offers step changesets. */
  step?: string;
  /** The old side of a comparison of two turns. */
  from?: string;
  /** The new side of a comparison of two turns. */
  to?: string;
  /** A file, by display path. */
  file?: string;
  /** A line of `file`: `L<n>` on the old side, `R<n>` on the new. */
  line?: string;
}

const KEYS = ['session', 'view', 'turn', 'step', 'from', 'to', 'file', 'line'] as const;

/** Reads a location from an address's query (other parameters are ignored). */
function parseLocation(search: string): ViewLocation {
  const params = new URLSearchParams(search);
  const location: ViewLocation = {};
  for (const key of KEYS) {
    const value = params.get(key);
    if (value !== null && value !== '') location[key] = value;
  }
  if (location.line !== undefined && !/^[LR]\d+$/.test(location.line)) delete location.line;
  return location;
}

/** The query string of a location (`?…`, or `''` when it names nothing). */
function formatLocation(location: ViewLocation): string {
  const params = new URLSearchParams();
  for (const key of KEYS) {
    const value = location[key];
    if (value !== undefined) params.set(key, value);
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** What the app shows now, as a location. */
function locationOf(app: App): ViewLocation {
  const location: ViewLocation = {};
  if (!app.sessionUri?.startsWith(SESSION_PREFIX)) return location;
  const session = app.sessionUri.slice(SESSION_PREFIX.length);
  location.session = session;
  const open = app.open;
  if (open) {
    if (open.changeKind === 'compare-turns' && app.compare.length === 2) [location.from, location.to] = app.compare as [string, string];
    else if (app.openTurnId !== undefined) {
      location.turn = app.openTurnId;
      if (app.openStep !== undefined) location.step = String(app.openStep);
    } else {
      const prefix = `${CHANGESET_PREFIX}${session}/`;
      if (open.uri.startsWith(prefix)) location.view = open.uri.slice(prefix.length);
    }
  }
  const file = app.selectedFile;
  if (file) {
    location.file = displayPathOf(file);
    if (app.selectedLine !== undefined) location.line = app.selectedLine;
  }
  return location;
}

/** Opens the changeset a location names in the selected session; false when it names none or it is not offered. */
async function openLocationView(app: App, location: ViewLocation): Promise<boolean> {
  if (location.from !== undefined && location.to !== undefined) {
    if (!app.catalogue.some((c) => c.changeKind === 'compare-turns')) return false;
    await app.openCompare(location.from, location.to);
    return true;
  }
  if (location.turn !== undefined) {
    const step = Number(location.step);
    if (location.step !== undefined && Number.isInteger(step) && step > 0 && app.catalogue.some((c) => c.changeKind === 'step')) {
      await app.openStepOf(location.turn, step);
      return true;
    }
    // A server without step changesets opens the step's turn.
    if (!app.catalogue.some((c) => c.changeKind === 'turn')) return false;
    await app.openTurn(location.turn);
    return true;
  }
  if (location.view !== undefined && app.sessionUri) {
    const uri = `${CHANGESET_PREFIX}${app.sessionUri.slice(SESSION_PREFIX.length)}/${location.view}`;
    const entry = app.catalogue.find((c) => isStatic(c) && c.uriTemplate === uri);
    if (!entry) return false;
    await app.openEntry(entry);
    return true;
  }
  return false;
}

/**
 * Keeps the address and the view in step: applies the address on load and
 * on back / forward, writes the view into the address as it changes, and
 * selects the linked file (or the first file) once a changeset's files arrive.
 */
export function installDeepLinks(app: App): void {
  let wanted: { file?: string; line?: string } | undefined = pickFile(parseLocation(location.search));
  const first = parseLocation(location.search);
  // While a linked view is being reached (on load, on back / forward) its intermediate steps stay out of the history.
  let applying = first.session !== undefined;
  if (first.session !== undefined) {
    const session = SESSION_PREFIX + first.session;
    const changeset = guessUri(first);
    app.landing = { session, open: () => openLocationView(app, first), prefetch: changeset ? [session, changeset] : [session] };
  }
  const settle = (): void => {
    if (!applying) return;
    applying = false;
    // After the first frame: replacing the history entry can take tens of milliseconds in Chromium.
    requestAnimationFrame(() =>
      setTimeout(() => {
        if (!applying) history.replaceState(null, '', location.pathname + formatLocation(locationOf(app)) + location.hash);
      }, 0),
    );
  };

  const resolveFile = (): void => {
    const state = app.changeset;
    if (!app.open || !state || state.status === 'computing') return;
    if (wanted?.file !== undefined) {
      const file = state.files.find((f) => displayPathOf(f) === wanted!.file);
      // A file past what the state carries is known once every file is listed.
      if (file || (state.status === 'ready' && app.allFiles.loading(app.open.uri) === 0)) {
        const line = wanted.line;
        wanted = undefined;
        if (file) {
          app.selectFile(file.id, 'pick', line);
          settle();
          return;
        }
      } else {
        // The linked file is not among the files the state carries: the rest are listed now, not after the first screen.
        app.allFiles.now(app.open.uri);
        return;
      }
    }
    wanted = undefined;
    if (app.selectedFileId === undefined) {
      const firstRow = app.rows.find((r) => r.type === 'file');
      if (firstRow && firstRow.type === 'file') app.selectFile(firstRow.file.id, 'scroll');
    }
    settle();
  };

  app.client.on('channel', (uri) => {
    if (uri === app.open?.uri) resolveFile();
  });

  app.events.on('navigate', () => {
    // A changeset just opened: select the linked file or the first one once its files are known.
    if (app.selectedFileId === undefined) queueMicrotask(resolveFile);
    if (applying) return;
    const next = formatLocation(locationOf(app));
    if (next === location.search || (next === '' && location.search === '')) return;
    const url = location.pathname + next + location.hash;
    // Settling on a view (the session, then its changeset, then a first file) is one history entry.
    const settled = parseLocation(location.search).file !== undefined;
    if (app.selectionSource === 'scroll' || !settled) history.replaceState(null, '', url);
    else history.pushState(null, '', url);
  });

  window.addEventListener('popstate', () => {
    const target = parseLocation(location.search);
    wanted = pickFile(target);
    applying = true;
    void applyLocation(app, target).finally(resolveFile);
  });
}

/**
 * The changeset URI a link names, built the way this server shapes them
 * (the catalogue confirms it once the session arrives; a wrong guess only
 * costs a refused subscription).
 */
function guessUri(location: ViewLocation): string | undefined {
  // The session part is kept as it appears in its URI (already encoded).
  const base = `${CHANGESET_PREFIX}${location.session!}`;
  if (location.from !== undefined && location.to !== undefined) {
    return expandChangesetUri(`${base}/compare/{originalTurnId}/{modifiedTurnId}`, { originalTurnId: location.from, modifiedTurnId: location.to });
  }
  if (location.turn !== undefined && location.step !== undefined)
    return expandChangesetUri(`${base}/step/{turnId}/{step}`, { turnId: location.turn, step: location.step });
  if (location.turn !== undefined) return expandChangesetUri(`${base}/turn/{turnId}`, { turnId: location.turn });
  return location.view !== undefined ? `${base}/${location.view}` : undefined;
}

function pickFile(location: ViewLocation): { file?: string; line?: string } | undefined {
  if (location.file === undefined) return undefined;
  return { file: location.file, ...(location.line !== undefined ? { line: location.line } : {}) };
}

/** Brings the app to a location (back / forward): session, then changeset; the file follows when its files arrive. */
async function applyLocation(app: App, target: ViewLocation): Promise<void> {
  const sessionUri = target.session !== undefined ? SESSION_PREFIX + target.session : undefined;
  if (sessionUri !== undefined && sessionUri !== app.sessionUri && app.sessions.has(sessionUri)) {
    await app.selectSession(sessionUri, () => openLocationView(app, target));
    return;
  }
  const current = locationOf(app);
  const sameView =
    current.view === target.view && current.turn === target.turn && current.step === target.step && current.from === target.from && current.to === target.to;
  if (!sameView && !(await openLocationView(app, target))) {
    const entry = app.catalogue.find((c) => c.changeKind === 'session' && isStatic(c));
    if (entry) await app.openEntry(entry);
  }
  if (sameView) {
    const file = target.file !== undefined ? app.changeset?.files.find((f) => displayPathOf(f) === target.file) : undefined;
    if (file) app.selectFile(file.id, 'pick', target.line);
  }
}
