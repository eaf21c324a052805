import type { ChangesetFile } from '../../protocol/index.js';
import type { ChangesetFileMeta } from '../../protocol/extensions/changeset-file.js';
import { sha256Of } from '../changes/content-hash.js';
import type { BlobRef, FileChange } from '../changes/file-change.js';
import type { FileStats } from '../changes/file-stats.js';
import { fileUri } from '../file-uri.js';
import type { RecordingSession } from '../session/recording-session.js';
import { unrunFilters } from '../snapshot/index.js';
import { contentUri } from './content-uri.js';

export type { ChangesetFileMeta };

/** Builds `ChangesetFile`s from file changes, and remembers which content it handed out. */
export class ChangesetFileBuilder {
  /** `root:oid` of every object a content URI was issued for. */
  readonly issued = new Set<string>();

  private readonly filters = new Map<number, { check: (path: string) => string | undefined; at: number }>();

  constructor(private readonly session: RecordingSession) {}

  async build(change: FileChange): Promise<ChangesetFile> {
    const stats = await this.session.files.stats(change);
    const afterUri = change.after ? fileUri(change.absPath) : undefined;
    const beforeUri = change.before ? fileUri(change.oldAbsPath ?? change.absPath) : undefined;
    const meta: ChangesetFileMeta = { path: this.session.files.display(change), kind: change.kind, root: change.root };
    if (change.oldAbsPath) meta.oldPath = this.session.files.display({ absPath: change.oldAbsPath, root: change.root, path: change.oldPath ?? '' });
    if (change.similarity !== undefined && change.kind === 'renamed') meta.similarity = Math.round(change.similarity * 1000) / 1000;
    if (stats.binary) meta.binary = true;
    if (stats.oversized) meta.oversized = true;
    if (change.captured) meta.captured = true;
    if (change.leftWorkingDirectory) meta.leftWorkingDirectory = true;
    const filter = change.root >= 0 ? this.unrunFilter(change.root, change.path) : undefined;
    if (filter !== undefined) meta.filterNotRun = filter;
    const edit: ChangesetFile['edit'] = { diff: { added: stats.added, removed: stats.deleted } };
    const sides = [
      ['before', change.before, beforeUri],
      ['after', change.after, afterUri],
    ] as const;
    for (const [name, ref, uri] of sides) {
      if (!ref) continue;
      edit[name] = await this.side(uri!, ref, change.root, stats);
      meta[`${name}Oid`] = ref.oid;
      meta[`${name}Mode`] = ref.mode;
      if (ref.unread) meta[`${name}Unread`] = ref.unread;
      const hash = await sha256Of(ref);
      if (hash) meta[`${name}Sha256`] = hash;
    }
    return { id: afterUri ?? beforeUri!, edit, _meta: meta as unknown as Record<string, unknown> };
  }

  /** The filter driver git runs on a file and this server does not (config read at most once a second per directory). */
  private unrunFilter(root: number, path: string): string | undefined {
    const now = Date.now();
    let known = this.filters.get(root);
    if (!known || now - known.at > 1000) {
      known = { check: unrunFilters(this.session.files.root(root).dir), at: now };
      this.filters.set(root, known);
    }
    return known.check(path);
  }

  private async side(fileUri: string, ref: BlobRef, root: number, stats: FileStats) {
    const storeRoot = Math.max(root, 0);
    this.issued.add(`${storeRoot}:${ref.oid}`);
    const side: { uri: string; content: string; sizeHint?: number; contentType: string } = {
      uri: fileUri,
      content: contentUri({ sessionId: this.session.id, root: storeRoot, oid: ref.oid }),
      contentType: stats.binary || ref.mode === '160000' ? 'application/octet-stream' : 'text/plain; charset=utf-8',
    };
    const size = ref.size ?? (ref.oversized || ref.mode === '160000' ? undefined : (await ref.store.readObject(ref.oid)).content.length);
    if (size !== undefined) side.sizeHint = size;
    return side;
  }
}

/** The `_meta` of a file this server built. */
export function metaOf(file: ChangesetFile): ChangesetFileMeta {
  return file._meta as unknown as ChangesetFileMeta;
}
