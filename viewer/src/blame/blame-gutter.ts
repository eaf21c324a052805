/**
 * The blame gutter: who last wrote each line of a file's new side, from
 * the server's record (`provenance/lines`). "Blame" on a file's header
 * turns it on for the page; while on, the file shown is asked about (only
 * then, and only that file), and each line of its new side gets a mark
 * coloured by its author — a colour per turn, one for your own edits, one
 * for what was there before recording, stripes where two sessions wrote at
 * once — whose tooltip says who (the turn's prompt, the agent and tool, the
 * time) and whose click opens that turn. A legend above the diff names
 * each author once.
 */
import type { ChangesetFile, URI } from '../../../protocol/index.js';
import type { LineAuthor, ProvenanceResult, TurnAuthor } from '../../../protocol/extensions/provenance.js';
import type { App } from '../app.js';
import { formatTime, h } from '../dom.js';
import { displayPathOf } from '../files-model.js';

/** One file's answer, or the question on its way. */
interface Entry {
  result?: ProvenanceResult;
  error?: string;
}

/** The page's blame: whether it is on, and the answers so far. */
class BlameStore {
  on = false;
  private readonly answers = new Map<string, Entry>();

  constructor(private readonly app: App) {}

  toggle(): void {
    this.on = !this.on;
    this.app.invalidate('diff');
  }

  /** The answer for the file as the changeset shows it now; asks for it the first time. */
  entry(channel: URI, file: ChangesetFile): Entry | undefined {
    const session = this.app.sessionUri;
    if (!session) return undefined;
    // A turn or an action of yours can change who wrote the lines of a live view: asked again then.
    const key = `${channel}\n${file.id}\n${file.edit.after?.content ?? ''}\n${this.app.diffEpoch}`;
    let entry = this.answers.get(key);
    if (!entry) {
      entry = {};
      if (this.answers.size > 50) this.answers.clear();
      this.answers.set(key, entry);
      const asked = entry;
      this.app.client
        .request('provenance/lines', { session, path: file.id, changeset: channel, side: 'after' })
        .then(
          (result) => {
            asked.result = result;
          },
          (error: unknown) => {
            // "changeset: turn 3 is still in progress": the reader needs the words, not the field they are about.
            asked.error = (error as Error).message.replace(/^(?:params\.)?(?:changeset|path|session|side): /, '');
          },
        )
        .finally(() => this.app.invalidate('diff'));
    }
    return entry;
  }
}

const stores = new WeakMap<App, BlameStore>();

function blameOf(app: App): BlameStore {
  let store = stores.get(app);
  if (!store) stores.set(app, (store = new BlameStore(app)));
  return store;
}

/** The "Blame" toggle of a file's header; nothing for a deleted file (no new side to blame). */
export function blameToggle(app: App, file: ChangesetFile): HTMLElement | null {
  if (!file.edit.after || !app.sessionUri) return null;
  const store = blameOf(app);
  const path = displayPathOf(file);
  return h(
    'button',
    {
      type: 'button',
      class: ['op-compact', 'blame-toggle', store.on && 'on'],
      'aria-pressed': String(store.on),
      title: store.on ? 'Hide who wrote each line' : `Show who last wrote each line of ${path}: which turn, you, or before recording`,
      'aria-label': `Blame: who wrote each line of ${path}`,
      'data-focus-key': 'blame-toggle',
      onclick: () => store.toggle(),
    },
    'Blame',
  );
}

/**
 * Draws the gutter over a file's diff already in `pane` (its new-side line
 * numbers are `td.num[data-line="R<n>"]`), and the legend under `header`
 * (the one-file layout). Does nothing while blame is off.
 */
export function drawBlame(app: App, pane: HTMLElement, channel: URI, file: ChangesetFile): void {
  const store = blameOf(app);
  if (!store.on || !file.edit.after) return;
  const entry = store.entry(channel, file);
  if (!entry) return;
  const path = displayPathOf(file);
  let legend: HTMLElement;
  if (entry.error !== undefined) {
    legend = h('p', { class: ['blame-legend', 'note'], role: 'status' }, `Could not tell who wrote the lines: ${entry.error}`);
  } else if (!entry.result) {
    legend = h('p', { class: ['blame-legend', 'note'], role: 'status' }, 'Finding who wrote each line…');
  } else {
    legend = legendOf(app, entry.result, path);
    const table = pane.querySelector('table.diff');
    if (table) markLines(app, table, entry.result);
  }
  const header = pane.querySelector('header');
  if (header) header.after(legend);
  else pane.prepend(legend);
}

/**
 * Marks the drawn rows of one file of the review page (All files): its
 * new-side line numbers `.num[data-line="R<n>"]` under `body`. Rows keep
 * their height there, so there is no legend: each mark's tooltip says who.
 * Asked for only for the files drawn, and only while blame is on.
 */
export function markBlame(app: App, body: HTMLElement, channel: URI, file: ChangesetFile): void {
  const store = blameOf(app);
  if (!store.on || !file.edit.after) return;
  const result = store.entry(channel, file)?.result;
  if (result) markLines(app, body, result);
}

function markLines(app: App, container: Element, result: ProvenanceResult): void {
  container.classList.add('blamed');
  for (const cell of container.querySelectorAll<HTMLElement>('.num[data-line^="R"]')) {
    const line = Number(cell.dataset['line']!.slice(1));
    const range = rangeAt(result, line);
    if (range) cell.append(mark(app, result.authors[range.author]!, line, range.restored === true));
  }
}

/** The range holding a line (ranges are sorted and do not overlap). */
function rangeAt(result: ProvenanceResult, line: number): ProvenanceResult['ranges'][number] | undefined {
  let lo = 0;
  let hi = result.ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const r = result.ranges[mid]!;
    if (line < r.startLine) hi = mid - 1;
    else if (line > r.endLine) lo = mid + 1;
    else return r;
  }
  return undefined;
}

/** One line's mark: its author's colour, who in its tooltip; a turn's opens it. */
function mark(app: App, author: LineAuthor, line: number, restored: boolean): HTMLElement {
  const who = `${shortOf(app, author)}${restored ? ' (put back by a revert, restore or undo)' : ''}`;
  const opens = author.kind === 'turn' ? author : undefined;
  const el = h(opens ? 'button' : 'span', {
    ...(opens ? { type: 'button', tabindex: '-1' } : {}),
    class: ['blame-mark', `blame-${author.kind}`],
    title: `${tooltipOf(app, author)}${restored ? '\nPut back by a revert, restore or undo: written first by this author.' : ''}${opens ? `\nClick to open turn ${opens.turn}.` : ''}`,
    'aria-label': `Line ${line}: ${who}${opens ? `. Open turn ${opens.turn}` : ''}`,
    'data-blame': who,
    onclick: opens
      ? (event: MouseEvent) => {
          event.stopPropagation();
          void openTurnOf(app, opens);
        }
      : undefined,
  });
  colour(el, author, app);
  return el;
}

/** The legend: each author of the file once, its colour and words; a turn's opens it. */
function legendOf(app: App, result: ProvenanceResult, path: string): HTMLElement {
  const used = new Set(result.ranges.map((r) => r.author));
  const items = result.authors
    .map((author, i) => ({ author, i }))
    .filter(({ i }) => used.has(i))
    .sort((a, b) => order(a.author) - order(b.author) || turnOf(a.author) - turnOf(b.author))
    .map(({ author }) => {
      const swatch = h('span', { class: ['blame-swatch', `blame-${author.kind}`], 'aria-hidden': 'true' });
      colour(swatch, author, app);
      const words = legendWords(app, author);
      return h(
        'li',
        {},
        author.kind === 'turn'
          ? h(
              'button',
              {
                type: 'button',
                class: 'blame-open',
                title: `${tooltipOf(app, author)}\nClick to open turn ${author.turn}.`,
                onclick: () => void openTurnOf(app, author),
              },
              swatch,
              words,
            )
          : h('span', { title: tooltipOf(app, author) }, swatch, words),
      );
    });
  const note = result.binary ? 'A binary file: no lines.' : result.missing ? 'The file is not in this version.' : undefined;
  return h(
    'div',
    { class: 'blame-legend', role: 'group', 'aria-label': `Who wrote the lines of ${path}` },
    h('span', { class: 'blame-title' }, note ?? 'Who wrote these lines:'),
    h('ul', {}, items),
  );
}

const order = (a: LineAuthor): number => ({ turn: 0, mixed: 1, user: 2, 'before-recording': 3 })[a.kind];
const turnOf = (a: LineAuthor): number => (a.kind === 'turn' ? a.turn : 0);

/** "turn 2", or "turn 2 of “Other”" for another session's. */
function turnName(app: App, a: TurnAuthor): string {
  return a.session === app.sessionUri ? `turn ${a.turn}` : `turn ${a.turn} of “${a.sessionTitle ?? 'another session'}”`;
}

/** Where an edit of yours was seen: "between turns 1 and 2", "after turn 2", "during turn 3". */
function userWhen(app: App, a: Extract<LineAuthor, { kind: 'user' }>): string {
  if (a.when === 'during-turn') return a.turn !== undefined ? `during turn ${a.turn}` : 'during a turn';
  if (a.turn === undefined) return 'before turn 1';
  const turns = a.session === app.sessionUri ? (app.chat?.turns.length ?? 0) : 0;
  return a.turn < turns ? `between turns ${a.turn} and ${a.turn + 1}` : `after turn ${a.turn}`;
}

/** A mark's words: "turn 2 · Claude Code · step 1 Edit", "you, between turns 1 and 2", "before recording · a1b2c3d Ann". */
function shortOf(app: App, a: LineAuthor): string {
  switch (a.kind) {
    case 'turn':
      return [turnName(app, a), a.agent, a.step !== undefined ? `step ${a.step}${a.tool ? ` ${a.tool}` : ''}` : undefined].filter(Boolean).join(' · ');
    case 'user':
      return `you, ${userWhen(app, a)}`;
    case 'before-recording':
      return a.commit ? `before recording · ${a.commit.oid.slice(0, 7)} ${a.commit.author}` : 'before recording';
    case 'mixed':
      return `mixed: ${a.candidates.map((c) => turnName(app, c)).join(', ')}`;
  }
}

/** A legend entry's words: "Turn 2 “Fix the login”", "You, by hand", "Before recording". */
function legendWords(app: App, a: LineAuthor): string {
  switch (a.kind) {
    case 'turn':
      return `${capital(turnName(app, a))}${a.prompt ? ` “${cut(a.prompt, 60)}”` : ''}`;
    case 'user':
      return `You, ${userWhen(app, a)}`;
    case 'before-recording':
      return a.commit ? `Before recording: ${a.commit.oid.slice(0, 7)} ${a.commit.author}` : 'Before recording';
    case 'mixed':
      return `Two sessions at once: ${a.candidates.map((c) => turnName(app, c)).join(' or ')}`;
  }
}

/** The tooltip: who, the prompt, the agent and tool, when. */
function tooltipOf(app: App, a: LineAuthor): string {
  switch (a.kind) {
    case 'turn':
      return [
        `${capital(turnName(app, a))}${a.agent ? ` · ${a.agent}` : ''}${a.step !== undefined ? ` · step ${a.step}${a.tool ? ` (${a.tool})` : ''}` : ''}`,
        a.prompt ? `“${cut(a.prompt, 300)}”` : undefined,
        `Started ${formatTime(a.at)}`,
      ]
        .filter(Boolean)
        .join('\n');
    case 'user':
      return [
        `You, by hand ${userWhen(app, a)}: an edit no turn made`,
        a.after && a.before ? `Between ${formatTime(a.after)} and ${formatTime(a.before)}` : a.before ? `Seen ${formatTime(a.before)}` : undefined,
      ]
        .filter(Boolean)
        .join('\n');
    case 'before-recording':
      return a.commit
        ? `There before recording began\nCommit ${a.commit.oid.slice(0, 7)} “${cut(a.commit.summary, 120)}” by ${a.commit.author}, ${formatTime(a.commit.at)}`
        : `There before recording began${a.reason ? ` (${a.reason})` : ''}`;
    case 'mixed':
      return `Two sessions changed this file at the same time; the record cannot tell which wrote the line:\n${a.candidates.map((c) => `${capital(turnName(app, c))}${c.prompt ? ` “${cut(c.prompt, 80)}”` : ''}`).join('\n')}`;
  }
}

/** Opens the turn's changeset, in its session. */
async function openTurnOf(app: App, a: TurnAuthor): Promise<void> {
  if (a.session === app.sessionUri) await app.openTurn(a.turnId);
  else
    await app.selectSession(a.session, async () => {
      await app.openTurn(a.turnId);
      return true;
    });
}

/** Its author's colour, set through the CSSOM (the page's CSP allows no inline style attributes). */
function colour(el: HTMLElement, a: LineAuthor, app: App): void {
  if (a.kind === 'turn') el.style.setProperty('--blame', turnColour(a, app));
  else if (a.kind === 'mixed') {
    const [first, second] = a.candidates;
    if (first) el.style.setProperty('--blame', turnColour(first, app));
    if (second) el.style.setProperty('--blame-2', turnColour(second, app));
  }
}

/** The first turns' colours: apart from one another, from your edits' amber, and from the added and removed lines' green and red. */
const TURN_COLOURS = ['#0969da', '#8250df', '#1b7c83', '#bf3989', '#953800'];

/** A turn's colour: one of the palette for the first turns, then hues a golden angle apart; another session's turned further. */
function turnColour(a: TurnAuthor, app: App): string {
  let offset = 0;
  if (a.session !== app.sessionUri) for (const ch of a.session) offset = (offset * 31 + ch.charCodeAt(0)) % 360;
  if (offset === 0 && a.turn >= 1 && a.turn <= TURN_COLOURS.length) return TURN_COLOURS[a.turn - 1]!;
  const hue = Math.round((a.turn * 137.508 + 200 + offset) % 360);
  return `hsl(${hue} 62% 45%)`;
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function cut(text: string, max: number): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length <= max ? one : `${one.slice(0, max - 1)}…`;
}
