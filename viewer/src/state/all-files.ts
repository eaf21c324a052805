/**
 * Every file of the open changeset, also past what its state carries: a
 * changeset whose state is cut (`_meta.truncated`, over the server's file
 * or byte cap) has the rest of its files listed with `changesetFiles` in
 * compact pages, loaded once the first screen is drawn. The page then sees
 * one state with all of them — list, filter, `j` / `k`, review page, "Mark
 * all viewed" alike.
 *
 * The shared reducers know only the files the state carries, so "Viewed"
 * on the others is followed here: the server's echoes (anyone's) over the
 * flags the pages came with, and this client's ticks still waiting for
 * their echo on top, as the mirror does for the state's own files. A file
 * object stays the same object while nothing about it changes (the review
 * page keys its diffs by the edit's identity).
 */
import type { ActionEnvelope, ChangesetFile, ChangesetFilesReviewChangedAction, ChangesetState, URI } from '../../../protocol/index.js';
import { expandCompactFiles } from '../../../protocol/extensions/changeset-files.js';
import type { ViewerClient } from '../client.js';

interface Listing {
  /** The state's `_meta` the listing belongs to: a new one (the list was replaced) loads it again. */
  meta: unknown;
  /** Files past the state's, in the server's order, once every page arrived. */
  rest?: ChangesetFile[];
  /** Ids of `rest`. */
  restIds?: Set<string>;
  /** Review flags of `rest` from echoes that arrived after their page. */
  confirmed: Map<string, boolean>;
  /** Grows with every change to `rest` or `confirmed`. */
  version: number;
  /** The last combined state, and what it was built from. */
  built?: { state: ChangesetState; version: number; pending: string; result: ChangesetState };
  /** A file of `rest` with another review flag, kept so it stays the same object. */
  flipped: Map<string, ChangesetFile>;
  /** Full entries fetched for files of `rest` (their content URIs). */
  full: Map<string, Promise<ChangesetFile | undefined>>;
  /** Whether its pages were asked for (it waits for the first screen until then). */
  started: boolean;
}

/** The open changeset with every file. */
export class AllFiles {
  private readonly listings = new Map<URI, Listing>();

  /** `later` runs a task once the first screen is drawn (the listing then does not hold up that screen's diffs). */
  constructor(
    private readonly client: ViewerClient,
    private readonly later: (task: () => void) => void,
  ) {
    client.on('envelope', (envelope) => this.onEnvelope(envelope));
  }

  /** The state of a changeset with every file once they are loaded (the mirrored state until then). */
  state(uri: URI): ChangesetState | undefined {
    const state = this.client.mirror.state(uri, 'changeset');
    if (!state || !isCut(state)) {
      this.listings.delete(uri);
      return state;
    }
    let listing = this.listings.get(uri);
    if (!listing || listing.meta !== state._meta) {
      listing = { meta: state._meta, confirmed: new Map(), version: 0, flipped: new Map(), full: new Map(), started: false };
      this.listings.set(uri, listing);
      const created = listing;
      this.later(() => this.begin(uri, created));
    }
    if (!listing.rest) return state;
    const pending = this.client.mirror.pendingOf(uri);
    const pendingKey = pending.map((p) => p.clientSeq).join(',');
    const built = listing.built;
    if (built && built.state === state && built.version === listing.version && built.pending === pendingKey) return built.result;
    const result: ChangesetState = { ...state, files: state.files.concat(this.rest(listing, pending)) };
    listing.built = { state, version: listing.version, pending: pendingKey, result };
    return result;
  }

  /** Lists the rest of a cut changeset's files now rather than after the first screen (a link names a file past the state's). */
  now(uri: URI): void {
    const listing = this.listings.get(uri);
    if (listing) this.begin(uri, listing);
  }

  private begin(uri: URI, listing: Listing): void {
    if (listing.started || this.listings.get(uri) !== listing) return;
    listing.started = true;
    void this.load(uri, listing);
  }

  /** How many files of a cut changeset are still loading (0 once all are, or when nothing was cut). */
  loading(uri: URI): number {
    const state = this.client.mirror.state(uri, 'changeset');
    if (!state || !isCut(state) || this.listings.get(uri)?.rest) return 0;
    const total = (state._meta as { totalFiles?: unknown }).totalFiles;
    return typeof total === 'number' ? Math.max(0, total - state.files.length) : 0;
  }

  /**
   * A file with its content URIs: the file itself when it has them, else
   * (a file past the state's) its full entry, asked for once.
   */
  async withContent(uri: URI, file: ChangesetFile): Promise<ChangesetFile | undefined> {
    if ((file.edit.after ?? file.edit.before)?.content) return file;
    const listing = this.listings.get(uri);
    let full = listing?.full.get(file.id);
    if (!full) {
      full = this.client
        .request('changesetFiles', { channel: uri, ids: [file.id] })
        .then((result) => result.files?.[0])
        .catch(() => undefined);
      listing?.full.set(file.id, full);
    }
    return full;
  }

  /** The files past the state's with their review flags as this client sees them. */
  private rest(listing: Listing, pending: readonly { action: { type: string } }[]): ChangesetFile[] {
    const flags = new Map(listing.confirmed);
    for (const p of pending) {
      if (p.action.type !== 'changeset/filesReviewChanged') continue;
      const action = p.action as ChangesetFilesReviewChangedAction;
      for (const id of action.files) if (listing.restIds!.has(id)) flags.set(id, action.reviewed);
    }
    if (flags.size === 0) return listing.rest!;
    return listing.rest!.map((file) => {
      const flag = flags.get(file.id);
      if (flag === undefined || flag === (file.reviewed === true)) return file;
      let other = listing.flipped.get(file.id);
      if (!other || (other.reviewed === true) !== flag) {
        const { reviewed: _old, ...rest } = file;
        other = flag ? { ...rest, reviewed: true } : rest;
        listing.flipped.set(file.id, other);
      }
      return other;
    });
  }

  private async load(uri: URI, listing: Listing): Promise<void> {
    const current = () => this.listings.get(uri) === listing;
    const files: ChangesetFile[] = [];
    let cursor: string | undefined;
    try {
      do {
        const page = await this.client.request('changesetFiles', { channel: uri, ...(cursor !== undefined ? { cursor } : {}) });
        if (!current()) return;
        const expanded = page.compact ? expandCompactFiles(page.compact) : (page.files ?? []);
        // Echoes that arrived before this page are in it.
        for (const file of expanded) listing.confirmed.delete(file.id);
        files.push(...expanded);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
    } catch {
      // The list changed under the pages (or the connection dropped): a new state starts a new listing.
      if (current()) setTimeout(() => current() && void this.load(uri, listing), 1000);
      return;
    }
    const state = this.client.mirror.state(uri, 'changeset');
    if (!current() || !state) return;
    const carried = new Set(state.files.map((f) => f.id));
    listing.rest = files.filter((f) => !carried.has(f.id));
    listing.restIds = new Set(listing.rest.map((f) => f.id));
    listing.version++;
    this.client.emit('channel', uri);
  }

  private onEnvelope(envelope: ActionEnvelope): void {
    if (envelope.rejectionReason !== undefined || envelope.action.type !== 'changeset/filesReviewChanged') return;
    const listing = this.listings.get(envelope.channel);
    if (!listing) return;
    const action = envelope.action as ChangesetFilesReviewChangedAction;
    // Before the pages arrive an echo may concern a file of a page still to come, which will carry it.
    for (const id of action.files) listing.confirmed.set(id, action.reviewed);
    listing.version++;
    this.client.emit('channel', envelope.channel);
  }
}

/** The state lists fewer files than the changeset has. */
function isCut(state: ChangesetState): boolean {
  const meta = state._meta as { truncated?: unknown; totalFiles?: unknown } | undefined;
  return meta?.truncated === true && state.status === 'ready';
}
