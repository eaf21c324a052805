/**
 * `changesetFiles`: a changeset's files in pages — every file, including
 * those past the state's cap — filtered, in compact or full form, each
 * answer under `PAGE_BYTES`.
 */
import type { ChangesetFile } from '../../protocol/index.js';
import {
  CompactWriter,
  MAX_IDS,
  PAGE_BYTES,
  type ChangesetFilesFilter,
  type ChangesetFilesParams,
  type ChangesetFilesResult,
} from '../../protocol/extensions/changeset-files.js';
import { channel as channelCheck } from '../../protocol/validate/checks.js';
import { invalidParams } from '../domain-error.js';
import { metaOf } from './changeset-files.js';

/** Most files one page may ask for. */
const MAX_LIMIT = 100_000;

/** What a page is cut from: the changeset's files in display-path order, and their version. */
export interface FileListing {
  files: ReadonlyMap<string, ChangesetFile>;
  version: number;
}

/** Answers one `changesetFiles` request over a computed changeset. */
export function filePage(listing: FileListing, params: ChangesetFilesParams): ChangesetFilesResult {
  const total = listing.files.size;
  if (params.ids !== undefined) {
    const wanted = new Set(params.ids);
    const files: ChangesetFile[] = [];
    let bytes = 0;
    for (const file of listing.files.values()) {
      if (!wanted.has(file.id)) continue;
      bytes += jsonBytes(file);
      // Past the budget the rest is left out, as ids not in the changeset are; the caller asks again for those.
      if (files.length > 0 && bytes > PAGE_BYTES) break;
      files.push(file);
    }
    return { version: listing.version, total, matched: files.length, offset: 0, files };
  }
  const start = params.cursor === undefined ? 0 : cursorOffset(params.cursor, listing.version);
  const limit = params.limit ?? MAX_LIMIT;
  const pass = matcher(params.filter);
  const full = params.form === 'full';
  const writer = full ? undefined : new CompactWriter();
  const files: ChangesetFile[] = [];
  let bytes = 0;
  let matched = 0;
  let taken = 0;
  let more = false;
  for (const file of listing.files.values()) {
    if (!pass(file)) continue;
    const at = matched++;
    if (at < start || more) continue;
    if (taken >= limit) {
      more = true;
      continue;
    }
    if (writer) {
      if (!writer.add(file)) more = true;
      else taken++;
    } else {
      const size = jsonBytes(file);
      if (taken > 0 && bytes + size > PAGE_BYTES) more = true;
      else {
        bytes += size;
        files.push(file);
        taken++;
      }
    }
  }
  const result: ChangesetFilesResult = { version: listing.version, total, matched, offset: Math.min(start, matched) };
  if (more) result.nextCursor = `${listing.version}:${start + taken}`;
  if (writer) result.compact = writer.page;
  else result.files = files;
  return result;
}

function cursorOffset(cursor: string, version: number): number {
  const match = /^(\d+):(\d+)$/.exec(cursor);
  if (!match) throw invalidParams('params.cursor is not a cursor this server gave');
  if (Number(match[1]) !== version) {
    throw invalidParams("params.cursor: the changeset's files changed since that page; ask again without a cursor");
  }
  return Number(match[2]);
}

function matcher(filter: ChangesetFilesFilter | undefined): (file: ChangesetFile) => boolean {
  if (!filter) return () => true;
  const text = filter.text ? filter.text.toLowerCase() : undefined;
  return (file) => {
    const meta = metaOf(file);
    if (text !== undefined && !(meta?.path ?? file.id).toLowerCase().includes(text)) return false;
    if (filter.kind !== undefined && meta?.kind !== filter.kind) return false;
    if (filter.reviewed !== undefined && (file.reviewed === true) !== filter.reviewed) return false;
    return true;
  };
}

/** UTF-8 bytes of a value's JSON. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

const changesetChannel = channelCheck('changeset');
const KINDS = new Set(['added', 'modified', 'deleted', 'renamed', 'mode']);

/** Checks `changesetFiles` params; the first problem, naming the field. */
export function checkFilesParams(params: unknown): string | undefined {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return 'params must be an object';
  const p = params as Record<string, unknown>;
  const channelProblem = changesetChannel(p['channel'], 'params.channel');
  if (channelProblem !== undefined) return channelProblem;
  if (p['cursor'] !== undefined && (typeof p['cursor'] !== 'string' || p['cursor'].length === 0 || p['cursor'].length > 64)) {
    return 'params.cursor must be a non-empty string from a previous page';
  }
  const limit = p['limit'];
  if (limit !== undefined && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)) {
    return `params.limit must be an integer from 1 to ${MAX_LIMIT}`;
  }
  if (p['form'] !== undefined && p['form'] !== 'compact' && p['form'] !== 'full') return 'params.form must be "compact" or "full"';
  const filter = p['filter'];
  if (filter !== undefined) {
    if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) return 'params.filter must be an object';
    const f = filter as Record<string, unknown>;
    if (f['text'] !== undefined && (typeof f['text'] !== 'string' || f['text'].length > 4096))
      return 'params.filter.text must be a string of at most 4096 characters';
    if (f['kind'] !== undefined && !KINDS.has(f['kind'] as string)) return 'params.filter.kind must be added, modified, deleted, renamed or mode';
    if (f['reviewed'] !== undefined && typeof f['reviewed'] !== 'boolean') return 'params.filter.reviewed must be a boolean';
  }
  const ids = p['ids'];
  if (ids !== undefined) {
    if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_IDS) return `params.ids must be an array of 1 to ${MAX_IDS} file ids`;
    const bad = ids.findIndex((id) => typeof id !== 'string' || id.length === 0);
    if (bad >= 0) return `params.ids[${bad}] must be a non-empty string`;
    for (const key of ['cursor', 'filter', 'form', 'limit']) if (p[key] !== undefined) return `params.${key} cannot be combined with params.ids`;
  }
  return undefined;
}
