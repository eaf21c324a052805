import type { ChangesetFile } from '../../protocol/index.js';
import { sha256Of } from '../changes/content-hash.js';
import type { BlobRef, FileChange } from '../changes/file-change.js';
import type { FileStats } from '../changes/file-stats.js';
import { fileUri } from '../file-uri.js';
import type { RecordingSession } from '../session/recording-session.js';
import type { UnreadReason } from '../snapshot/walker.js';
import { contentUri } from './content-uri.js';

/** What `ChangesetFile._meta` carries for each file. */
export interface ChangesetFileMeta {
  /** The label a reviewer sees (relative to the working directory, `../`, `~/` or absolute). */
  path: string;
  /** added, modified, deleted, renamed or mode (only the executable bit or file type changed). */
  kind: FileChange['kind'];
  /** Display path before a rename. */
  oldPath?: string;
  /** Rename similarity in [0, 1]. */
  similarity?: number;
  /** Either side is binary: no line counts, no hunks. */
  binary?: boolean;
  /** Either side is over the size limit: no line counts, no hunks. */
  oversized?: boolean;
  /** Object id (git blob id) of each side. */
  beforeOid?: string;
  afterOid?: string;
  /** SHA-256 (hex) of each side's content. */
  beforeSha256?: string;
  afterSha256?: string;
  /** Git mode of each side. */
  beforeMode?: string;
  afterMode?: string;
  /**
   * Why a side's file could not be read when its state was recorded
   * (`unreadable`, `oversized`, `not-a-file`): the side holds the content
   * last read, not what the file held then.
   */
  beforeUnread?: UnreadReason;
  afterUnread?: UnreadReason;
  /** Index of the working directory the file belongs to (-1: outside every one). */
  root: number;
  /** Captured by `beforeEdit` because snapshots do not see this path (ignored or outside). */
  captured?: boolean;
  /** The captured path now leads outside the working directories (a folder on its way links elsewhere): its new side was not read. */
  leftWorkingDirectory?: true;
}

/** Builds `ChangesetFile`s from file changes, and remembers which content it handed out. */
export class ChangesetFileBuilder {
  /** `root:oid` of every object a content URI was issued for. */
  readonly issued = new Set<string>();

  constructor(private readonly session: RecordingSession) {}

  async build(change: FileChange): Promise<ChangesetFile> {
    const stats = await this.session.stats(change);
    const afterUri = change.after ? fileUri(change.absPath) : undefined;
    const beforeUri = change.before ? fileUri(change.oldAbsPath ?? change.absPath) : undefined;
    const meta: ChangesetFileMeta = { path: this.session.display(change), kind: change.kind, root: change.root };
    if (change.oldAbsPath) meta.oldPath = this.session.display({ absPath: change.oldAbsPath, root: change.root, path: change.oldPath ?? '' });
    if (change.similarity !== undefined && change.kind === 'renamed') meta.similarity = Math.round(change.similarity * 1000) / 1000;
    if (stats.binary) meta.binary = true;
    if (stats.oversized) meta.oversized = true;
    if (change.captured) meta.captured = true;
    if (change.leftWorkingDirectory) meta.leftWorkingDirectory = true;
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
