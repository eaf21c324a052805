/**
 * `changesetFiles`: every file of a changeset, in pages, for changesets
 * whose state is cut (`ChangesetState._meta.truncated`). AHP has no way to
 * page a changeset's files; a client that does not call this method still
 * gets a valid state holding the first files and the totals of all.
 *
 * A page comes in one of two forms. `compact` (the default) carries what a
 * file list shows — id, display path, kind, line counts, review flag — in
 * columns, each id and path written as what it shares with the one before
 * it plus the rest (files come in display-path order, so neighbours share
 * their folders): about 35 bytes a file instead of 500–700, so 50,000
 * files take two answers. {@link expandCompactFiles} turns it back into
 * `ChangesetFile`s without their content URIs, hashes and blob ids (ask
 * for those files with `ids` when they are needed). `full` carries
 * `ChangesetFile`s as the state does. Either way an answer stays under
 * {@link PAGE_BYTES}.
 */
import type { ChangesetFile } from '../changeset/state.js';
import type { ChangeKindName, ChangesetFileMeta } from './changeset-file.js';

/** Most bytes of files in one answer (the JSON of `compact` or of `files`); the answer's frame stays under 1 MiB. */
export const PAGE_BYTES = 900_000;

/** Most ids one `ids` request may name. */
export const MAX_IDS = 1000;

/** Which files a page holds: every condition given must hold. */
export interface ChangesetFilesFilter {
  /** A substring of the display path, compared case-insensitively (as the viewer's filter box does). */
  text?: string;
  /** One change kind. */
  kind?: ChangeKindName;
  /** Only files marked reviewed ("Viewed"), or only those not. */
  reviewed?: boolean;
}

/** Params of `changesetFiles`. */
export interface ChangesetFilesParams {
  /** The changeset URI. */
  channel: string;
  /** The `nextCursor` of the previous page; omit for the first page. */
  cursor?: string;
  /** Most files wanted in this page (1–100,000; default 100,000); a page also ends before {@link PAGE_BYTES}. */
  limit?: number;
  /** Only the files that pass it; positions and `matched` count those. */
  filter?: ChangesetFilesFilter;
  /** `compact` (default) or `full` `ChangesetFile`s. */
  form?: 'compact' | 'full';
  /**
   * These files only, in full, in the changeset's order (at most
   * {@link MAX_IDS}; ids not in the changeset are left out). Takes no
   * cursor, filter or form.
   */
  ids?: string[];
}

/** Result of `changesetFiles`. */
export interface ChangesetFilesResult {
  /**
   * The file list's version: it changes whenever the changeset's files are
   * computed again (a live changeset after an edit). A cursor from another
   * version is refused (-32602): start again without one.
   */
  version: number;
  /** Files in the changeset. */
  total: number;
  /** Files that pass the filter (`total` without one). */
  matched: number;
  /** Position, among the files that pass the filter, of this page's first file. */
  offset: number;
  /** Cursor for the next page; absent on the last. */
  nextCursor?: string;
  /** The page in compact form (`form: 'compact'`). */
  compact?: CompactFiles;
  /** The page as `ChangesetFile`s (`form: 'full'`, or `ids`). */
  files?: ChangesetFile[];
}

/**
 * A page of files in columns: entry `i` of every array is the `i`-th file
 * of the page. Each id and display path is written as the number of
 * leading UTF-16 code units it shares with the previous file's (0 for the
 * first of the page) and the rest.
 */
export interface CompactFiles {
  /** Code units of the id shared with the previous file's id. */
  idShared: number[];
  /** The rest of the id; `null` when it equals the rest of the display path (`pathRest`). */
  idRest: (string | null)[];
  /** Code units of the display path shared with the previous file's path. */
  pathShared: number[];
  /** The rest of the display path. */
  pathRest: string[];
  /** One letter a file: `A` added, `M` modified, `D` deleted, `R` renamed, `T` mode (type or executable bit). */
  kinds: string;
  /** Lines added (`edit.diff.added`). */
  added: number[];
  /** Lines removed (`edit.diff.removed`). */
  removed: number[];
  /** Bits: 1 reviewed, 2 binary, 4 oversized. */
  flags: number[];
  /**
   * What only some files have, by position in the page: the `_meta` keys
   * other than path, kind, binary, oversized, blob ids, hashes and modes
   * (`root` when not 0, `oldPath`, `similarity`, `captured`,
   * `filterNotRun`, `beforeUnread`…), and `beforeUri` when the old side's
   * `file:` URI is not the id (a rename).
   */
  more?: Record<string, CompactMore>;
}

/** The rarer facts of one file of a compact page. */
export interface CompactMore {
  /** The old side's `file:` URI, when it is not the file's id. */
  beforeUri?: string;
  /** `_meta` keys beyond the columns. */
  meta?: Partial<ChangesetFileMeta>;
}

const KIND_LETTER: Record<ChangeKindName, string> = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R', mode: 'T' };
const LETTER_KIND: Record<string, ChangeKindName> = { A: 'added', M: 'modified', D: 'deleted', R: 'renamed', T: 'mode' };

/** `_meta` keys the columns carry, or that a compact page leaves out (blob ids, hashes, modes). */
const COLUMN_KEYS = new Set(['path', 'kind', 'binary', 'oversized', 'beforeOid', 'afterOid', 'beforeSha256', 'afterSha256', 'beforeMode', 'afterMode']);

function shared(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  // Never split a surrogate pair: the rest must stay valid UTF-16 to survive JSON.
  if (i > 0 && i < b.length && (b.charCodeAt(i - 1) & 0xfc00) === 0xd800) i--;
  return i;
}

function jsonBytes(value: unknown): number {
  const json = JSON.stringify(value);
  let bytes = json.length;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c >= 0x80) bytes += c >= 0x800 && (c & 0xfc00) !== 0xd800 && (c & 0xfc00) !== 0xdc00 ? 2 : 1;
  }
  return bytes;
}

/** Builds compact pages: add files in order until one does not fit. */
export class CompactWriter {
  readonly page: CompactFiles = { idShared: [], idRest: [], pathShared: [], pathRest: [], kinds: '', added: [], removed: [], flags: [] };
  /** JSON bytes written so far (an upper bound). */
  bytes = 200;
  private lastId = '';
  private lastPath = '';

  constructor(private readonly budget = PAGE_BYTES) {}

  /** Files in the page. */
  get length(): number {
    return this.page.flags.length;
  }

  /** Adds a file; false (and nothing added) when it would take the page past its budget, unless the page is empty. */
  add(file: ChangesetFile): boolean {
    const meta = (file._meta ?? {}) as Partial<ChangesetFileMeta> & Record<string, unknown>;
    const path = typeof meta.path === 'string' ? meta.path : file.id;
    const pathShared = shared(this.lastPath, path);
    const pathRest = path.slice(pathShared);
    const idShared = shared(this.lastId, file.id);
    const rest = file.id.slice(idShared);
    const idRest = rest === pathRest ? null : rest;
    const kind = KIND_LETTER[meta.kind as ChangeKindName] ?? (file.edit.before ? (file.edit.after ? 'M' : 'D') : 'A');
    const added = file.edit.diff?.added ?? 0;
    const removed = file.edit.diff?.removed ?? 0;
    const flags = (file.reviewed === true ? 1 : 0) | (meta.binary === true ? 2 : 0) | (meta.oversized === true ? 4 : 0);
    let more: CompactMore | undefined;
    const beforeUri = file.edit.before?.uri;
    if (beforeUri !== undefined && beforeUri !== file.id) more = { beforeUri };
    for (const key of Object.keys(meta)) {
      if (COLUMN_KEYS.has(key) || (key === 'root' && meta.root === 0)) continue;
      more ??= {};
      (more.meta ??= {} as Partial<ChangesetFileMeta>)[key as 'root'] = meta[key] as number;
    }
    const cost =
      String(idShared).length +
      (idRest === null ? 4 : jsonBytes(idRest)) +
      String(pathShared).length +
      jsonBytes(pathRest) +
      String(added).length +
      String(removed).length +
      String(flags).length +
      1 +
      7 +
      (more ? jsonBytes(more) + String(this.length).length + 4 : 0);
    if (this.length > 0 && this.bytes + cost > this.budget) return false;
    const p = this.page;
    const i = this.length;
    p.idShared.push(idShared);
    p.idRest.push(idRest);
    p.pathShared.push(pathShared);
    p.pathRest.push(pathRest);
    p.kinds += kind;
    p.added.push(added);
    p.removed.push(removed);
    p.flags.push(flags);
    if (more) (p.more ??= {})[String(i)] = more;
    this.bytes += cost;
    this.lastId = file.id;
    this.lastPath = path;
    return true;
  }
}

/**
 * The files of a compact page as `ChangesetFile`s: id, display path and
 * kind, line counts, the review flag, binary and oversized, and the rarer
 * `_meta` keys. Each side that exists has its `file:` URI; its `content`
 * is empty (ask `changesetFiles` with `ids` for the whole
 * entry before `resourceRead`).
 */
export function expandCompactFiles(page: CompactFiles): ChangesetFile[] {
  const out: ChangesetFile[] = [];
  let id = '';
  let path = '';
  for (let i = 0; i < page.flags.length; i++) {
    const pathRest = page.pathRest[i]!;
    path = path.slice(0, page.pathShared[i]!) + pathRest;
    id = id.slice(0, page.idShared[i]!) + (page.idRest[i] ?? pathRest);
    const kind = LETTER_KIND[page.kinds[i]!] ?? 'modified';
    const flags = page.flags[i]!;
    const more = page.more?.[String(i)];
    const meta: Partial<ChangesetFileMeta> = { path, kind, root: 0, ...more?.meta };
    if (flags & 2) meta.binary = true;
    if (flags & 4) meta.oversized = true;
    const edit: ChangesetFile['edit'] = { diff: { added: page.added[i]!, removed: page.removed[i]! } };
    if (kind !== 'added') edit.before = { uri: more?.beforeUri ?? id, content: '' };
    if (kind !== 'deleted') edit.after = { uri: id, content: '' };
    const file: ChangesetFile = { id, edit, _meta: meta as Record<string, unknown> };
    if (flags & 1) file.reviewed = true;
    out.push(file);
  }
  return out;
}
