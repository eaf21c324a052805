/**
 * Search in the open changeset's diffs: the occurrences of a text in the
 * added, removed and context lines of every file the filter shows, counted
 * ("12 matches in 3 files") and walked one after another. Diffs already
 * fetched for the page are searched at once; the others are fetched here,
 * four at a time with their progress shown, by themselves for up to
 * {@link AUTO_LOAD} files and on the reader's word past that (a 50,000-file
 * codemod is 50,000 requests). Binary and oversized files have no lines to
 * search.
 */
import type { ChangesetFile, URI } from '../../../protocol/index.js';
import type { DiffHunk } from '../../../protocol/extensions/file-diff.js';
import type { App } from '../app.js';
import type { FileMeta, FileRow } from '../files-model.js';
import type { DiffStore } from '../review/diff-store.js';
import { matchHunks, patternOf, type FileMatches, type LineKind, type LineMatch, type SearchQuery } from './matches.js';

/** Diffs fetched without asking first; past this many the reader is asked. */
export const AUTO_LOAD = 500;
/** Requests in flight at once. */
const CONCURRENCY = 4;

/** The hunks of a file's diff, or null when it has no lines (binary, too large). */
type Hunks = readonly DiffHunk[] | null;

/** What the search bar shows. */
export interface SearchSummary {
  /** Occurrences found so far. */
  matches: number;
  /** Files they are in. */
  files: number;
  /** 1-based position of the current occurrence, when one is current. */
  current?: number;
  /** Files searched (their diffs known), and files there are to search. */
  searched: number;
  total: number;
  /** Diffs being fetched now. */
  loading: boolean;
}

/** A file's key for its diff: the same content at the same context is the same diff (a "Viewed" tick changes nothing). */
function diffKey(file: ChangesetFile): string {
  const { before, after, diff } = file.edit;
  return `${before?.content ?? ''}|${after?.content ?? ''}|${diff?.added ?? ''}|${diff?.removed ?? ''}`;
}

/** The search's state and its walk through the occurrences. */
export class DiffSearch {
  query: SearchQuery = { text: '', kinds: new Set<LineKind>(['add', 'del', 'context']), matchCase: false };
  /** Called when the count, the current occurrence or the progress changed. */
  onChange: () => void = () => undefined;
  /** Called to bring an occurrence into view. */
  onReveal: (fileId: string, match: LineMatch) => void = () => undefined;

  /** Diffs fetched for the search: the changeset and context they belong to, then by file id. */
  private fetched: { scope: string; files: Map<string, { key: string; hunks: Hunks }> } = { scope: '', files: new Map() };
  /** Occurrences per diff for the query they were found for. */
  private readonly found = new WeakMap<object, { query: string; result: FileMatches }>();
  private readonly noLines = {};
  /** Per file shown, its occurrences (files with none are left out), in list order. */
  private results: { file: ChangesetFile; found: FileMatches }[] = [];
  private byFile = new Map<string, FileMatches>();
  /** Files shown whose diffs are not known yet. */
  private missing: ChangesetFile[] = [];
  private total = 0;
  private current: { fileId: string; match: LineMatch } | undefined;
  /** Fetch everything, even past {@link AUTO_LOAD}: the reader asked. */
  private loadAll = false;
  private queue: ChangesetFile[] = [];
  private running = 0;
  /** What the results were computed from; the same inputs give the same results. */
  private inputs: unknown[] = [];

  constructor(
    private readonly app: App,
    private readonly store: DiffStore,
  ) {}

  /** The occurrences of a file, when it has any. */
  matchesOf(fileId: string): FileMatches | undefined {
    return this.byFile.get(fileId);
  }

  /** The current occurrence. */
  get currentMatch(): { fileId: string; match: LineMatch } | undefined {
    return this.current;
  }

  /** Whether there is text to search for. */
  get active(): boolean {
    return this.query.text !== '';
  }

  /** Changes what is searched for; the walk starts over. */
  setQuery(change: Partial<SearchQuery>): void {
    this.query = { ...this.query, ...change };
    this.current = undefined;
    this.refresh(true);
  }

  /** Fetches the diffs of every file shown, also past {@link AUTO_LOAD}. */
  searchAll(): void {
    this.loadAll = true;
    this.refresh(true);
  }

  private get scope(): string {
    return `${this.app.open?.uri ?? ''}\n${this.app.display.context}`;
  }

  /**
   * Searches again when what it depends on changed: the text, the files
   * shown, the diffs known, the context lines. Cheap when nothing did.
   */
  refresh(force = false): void {
    const open = this.app.open;
    const rows = this.app.rows;
    const inputs = [open?.uri, rows, this.store.version, this.app.display.context, this.fetchedVersion, this.query];
    if (!force && inputs.every((v, i) => v === this.inputs[i])) return;
    if (open?.uri !== this.inputs[0]) this.loadAll = false;
    this.inputs = inputs;
    const scope = this.scope;
    if (this.fetched.scope !== scope) {
      this.fetched = { scope, files: new Map() };
      this.queue = [];
    }
    const pattern = patternOf(this.query);
    this.results = [];
    this.byFile = new Map();
    this.missing = [];
    this.total = 0;
    if (!open || !pattern) {
      this.queue = [];
      this.onChange();
      return;
    }
    const queryKey = `${this.query.matchCase ? 1 : 0}${[...this.query.kinds].sort().join(',')}\n${this.query.text}`;
    const lookup = this.store.lookup(open.uri);
    for (const row of rows) {
      if (row.type !== 'file') continue;
      const file = (row as FileRow).file;
      const meta = (file._meta ?? {}) as FileMeta;
      this.total++;
      let hunks: Hunks | undefined;
      if (meta.binary || meta.oversized) hunks = null;
      else {
        const entry = lookup(file);
        if (entry?.diff) hunks = entry.diff.kind === 'text' ? entry.diff.hunks : null;
        else {
          const own = this.fetched.files.get(file.id);
          if (own && own.key === diffKey(file)) hunks = own.hunks;
        }
      }
      if (hunks === undefined) {
        this.missing.push(file);
        continue;
      }
      const holder = hunks ?? this.noLines;
      let cached = this.found.get(holder);
      if (cached?.query !== queryKey) {
        cached = { query: queryKey, result: hunks ? matchHunks(hunks, this.query, pattern) : { matches: [], byLine: new Map() } };
        this.found.set(holder, cached);
      }
      if (cached.result.matches.length === 0) continue;
      this.results.push({ file, found: cached.result });
      this.byFile.set(file.id, cached.result);
    }
    if (this.current) {
      // The same occurrence, found again in a diff fetched anew (the page's or this search's: other objects, same lines).
      const { fileId, match } = this.current;
      const again = this.byFile.get(fileId)?.matches.find((m) => m.key === match.key && m.start === match.start && m.kind === match.kind);
      this.current = again ? { fileId, match: again } : undefined;
    }
    this.load(open.uri);
    this.onChange();
  }

  /** Bumped when a diff fetched here arrives. */
  private fetchedVersion = 0;

  private load(channel: URI): void {
    const wanted = this.loadAll || this.missing.length <= AUTO_LOAD ? this.missing : [];
    const queued = new Set(this.queue.map((f) => f.id));
    for (const file of wanted) if (!queued.has(file.id)) this.queue.push(file);
    // Files no longer shown (filtered out, another changeset) are not fetched.
    const missing = new Set(this.missing.map((f) => f.id));
    this.queue = this.queue.filter((f) => missing.has(f.id) && (this.loadAll || this.missing.length <= AUTO_LOAD));
    this.pump(channel);
  }

  private pump(channel: URI): void {
    while (this.running < CONCURRENCY && this.queue.length > 0) {
      const file = this.queue.shift()!;
      this.running++;
      void this.fetch(channel, file).finally(() => {
        this.running--;
        if (channel === this.app.open?.uri) this.pump(channel);
        this.refreshSoon();
      });
    }
  }

  private refreshing = false;

  /** Searches again on the next frame (diffs arriving four at a time are counted once per frame, not once each). */
  private refreshSoon(): void {
    if (this.refreshing) return;
    this.refreshing = true;
    requestAnimationFrame(() => {
      this.refreshing = false;
      this.refresh();
    });
  }

  private async fetch(channel: URI, file: ChangesetFile): Promise<void> {
    const scope = this.scope;
    const key = diffKey(file);
    let hunks: Hunks = null;
    try {
      const diff = await this.app.client.request('changesetFileDiff', { channel, fileId: file.id, context: this.app.display.context });
      hunks = diff.kind === 'text' ? diff.hunks : null;
    } catch {
      // A file whose diff cannot be had has nothing to search; the page says why where it draws it.
    }
    if (this.fetched.scope === scope) this.fetched.files.set(file.id, { key, hunks });
    this.fetchedVersion++;
  }

  /** What the bar shows. */
  summary(): SearchSummary {
    const matches = this.results.reduce((n, r) => n + r.found.matches.length, 0);
    const out: SearchSummary = {
      matches,
      files: this.results.length,
      searched: this.total - this.missing.length,
      total: this.total,
      loading: this.queue.length > 0 || this.running > 0,
    };
    const current = this.current;
    if (current) {
      let n = 0;
      for (const r of this.results) {
        if (r.file.id === current.fileId) {
          out.current = n + r.found.matches.indexOf(current.match) + 1;
          break;
        }
        n += r.found.matches.length;
      }
    }
    return out;
  }

  /** Files shown whose diffs are neither known nor being fetched (past {@link AUTO_LOAD}, until the reader asks). */
  get unsearched(): number {
    return this.loadAll || this.missing.length <= AUTO_LOAD ? 0 : this.missing.length;
  }

  /** Moves to the next (`+1`) or previous (`-1`) occurrence, round the end, and brings it into view. */
  step(delta: 1 | -1): void {
    this.refresh();
    if (this.results.length === 0) return;
    const flat: { fileId: string; match: LineMatch }[] = [];
    for (const r of this.results) for (const match of r.found.matches) flat.push({ fileId: r.file.id, match });
    const at = this.current ? flat.findIndex((f) => f.match === this.current!.match) : -1;
    const next = at < 0 ? (delta > 0 ? this.firstFrom() : flat.length - 1) : (at + delta + flat.length) % flat.length;
    this.current = flat[Math.max(0, Math.min(flat.length - 1, next))]!;
    this.onChange();
    this.onReveal(this.current.fileId, this.current.match);
  }

  /** Where the walk starts: the first occurrence in the selected file or after it, else the first. */
  private firstFrom(): number {
    const selected = this.app.selectedFileId;
    let n = 0;
    const shown = this.app.rows.filter((r): r is FileRow => r.type === 'file');
    const order = new Map(shown.map((r, i) => [r.file.id, i]));
    const from = selected === undefined ? 0 : (order.get(selected) ?? 0);
    for (const r of this.results) {
      if ((order.get(r.file.id) ?? 0) >= from) return n;
      n += r.found.matches.length;
    }
    return 0;
  }
}
