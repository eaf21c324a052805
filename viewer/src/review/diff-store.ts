/**
 * Diffs of the review page, fetched lazily: only files on (or near) the
 * screen are asked for, at most a few at a time, the most recently wanted
 * first, so scrolling through 5,000 files asks only for the ones passed.
 * Each entry is keyed by changeset, file and context lines and is replaced
 * when the file's edit (its content) changes.
 */
import type { ChangesetFile, ResourceReadResult, URI } from '../../../protocol/index.js';
import type { WorkspaceFileDiff } from '../../../protocol/extensions/file-diff.js';
import type { App } from '../app.js';
import { buildHunk, splitText, type HunkModel } from '../diff-model.js';

/** Requests in flight at once. */
const CONCURRENCY = 4;

/** One file's diff as the review page holds it. */
export interface FileDiffEntry {
  /** The edit the diff was computed for. */
  edit: ChangesetFile['edit'];
  /** The server's diff, once fetched. */
  diff?: WorkspaceFileDiff;
  /** Drawable hunks of a text diff. */
  hunks?: HunkModel[];
  /** Why the diff could not be fetched. */
  error?: string;
  /** The new version's lines, once read for expanding gaps. */
  text?: string[];
  /** Indexes of expanded gaps. */
  expanded: Set<number>;
  /** Settles when the diff has arrived or failed. */
  loaded: Promise<void>;
  /** The app's `diffEpoch` when the diff was asked for: a later one asks again, showing this diff meanwhile. */
  epoch?: string;
}

/** Lazily fetched diffs with a small request queue. */
export class DiffStore {
  /** Entries by changeset and context lines, then by file id (no key built per file: the page looks up thousands per frame). */
  private readonly entries = new Map<string, Map<string, FileDiffEntry>>();
  private queue: { files: Map<string, FileDiffEntry>; id: string; channel: URI; file: ChangesetFile; entry: FileDiffEntry }[] = [];
  private running = 0;
  /** Resolves an entry's `loaded`. */
  private readonly settle = new WeakMap<FileDiffEntry, () => void>();
  /** Grows whenever an entry is added, loaded or dropped (the page re-lays out only then). */
  version = 0;
  /** Called when a diff arrives (or fails); the page re-renders. */
  onLoaded: (file: ChangesetFile, entry: FileDiffEntry) => void = () => undefined;

  constructor(private readonly app: App) {}

  private filesOf(channel: URI): Map<string, FileDiffEntry> {
    const key = `${channel}\n${this.app.display.context}`;
    let files = this.entries.get(key);
    if (!files) this.entries.set(key, (files = new Map()));
    return files;
  }

  /** The entries of a changeset at the current context, for looking up many files. */
  lookup(channel: URI): (file: ChangesetFile) => FileDiffEntry | undefined {
    const files = this.filesOf(channel);
    return (file) => {
      const entry = files.get(file.id);
      return entry && entry.edit === file.edit ? entry : undefined;
    };
  }

  /** The entry of a file, queueing its fetch when it has none for this edit. */
  want(channel: URI, file: ChangesetFile): FileDiffEntry {
    const files = this.filesOf(channel);
    const known = files.get(file.id);
    const epoch = this.app.diffEpoch;
    if (known && known.edit === file.edit) {
      const at = this.queue.findIndex((q) => q.entry === known);
      if (known.epoch !== epoch && at < 0) {
        // Today's files may have changed since (a revert, a turn): asked for again, the diff known so far shown meanwhile.
        known.epoch = epoch;
        this.queue.unshift({ files, id: file.id, channel, file, entry: known });
        this.pump();
        return known;
      }
      // Still waiting: move it to the front, it is on screen again.
      if (at > 0) this.queue.unshift(...this.queue.splice(at, 1));
      return known;
    }
    let settle = (): void => undefined;
    const entry: FileDiffEntry = { edit: file.edit, expanded: new Set(), loaded: new Promise<void>((resolve) => (settle = resolve)), epoch };
    this.settle.set(entry, settle);
    // Keep expanded regions when only the review flag changed the edit's identity.
    if (known && known.edit.after?.content === file.edit.after?.content && known.edit.before?.content === file.edit.before?.content)
      entry.expanded = known.expanded;
    files.set(file.id, entry);
    this.version++;
    this.queue.unshift({ files, id: file.id, channel, file, entry });
    this.pump();
    return entry;
  }

  /** Forgets queued fetches of files no longer on screen (they are asked for again when they come back). */
  dropQueued(keep: (entry: FileDiffEntry) => boolean): void {
    const dropped = this.queue.filter((q) => !keep(q.entry));
    this.queue = this.queue.filter((q) => keep(q.entry));
    for (const q of dropped) if (q.files.get(q.id) === q.entry) q.files.delete(q.id);
    if (dropped.length > 0) this.version++;
  }

  private pump(): void {
    while (this.running < CONCURRENCY && this.queue.length > 0) {
      const next = this.queue.shift()!;
      this.running++;
      void this.fetch(next.channel, next.file, next.entry).finally(() => {
        this.running--;
        this.pump();
      });
    }
  }

  private async fetch(channel: URI, file: ChangesetFile, entry: FileDiffEntry): Promise<void> {
    try {
      const diff = await this.app.client.request('changesetFileDiff', { channel, fileId: file.id, context: this.app.display.context });
      entry.diff = diff;
      if (diff.kind === 'text') entry.hunks = diff.hunks.map(buildHunk);
    } catch (error) {
      entry.error = (error as Error).message;
    }
    this.version++;
    this.onLoaded(file, entry);
    this.settle.get(entry)?.();
  }

  /** Reads the new version's text (for expanding a gap); false when it could not be read. */
  async readText(file: ChangesetFile, entry: FileDiffEntry): Promise<boolean> {
    if (entry.text) return true;
    // A file past what the changeset's state carries is listed without its content URIs: its full entry has them.
    const content = (await this.app.allFiles.withContent(this.app.open?.uri ?? '', file))?.edit.after?.content;
    if (!content) return false;
    try {
      const result = await this.app.client.request('resourceRead', { channel: 'ahp-root://', uri: content });
      entry.text = splitText(decodeContent(result, entry.diff?.kind === 'text' ? entry.diff.encoding : 'utf-8'));
      return true;
    } catch (error) {
      this.app.say({ tone: 'error', text: `Could not read the file: ${(error as Error).message}` });
      return false;
    }
  }
}

/** The text of a `resourceRead` result in the diff's encoding. */
export function decodeContent(result: ResourceReadResult, encoding: string): string {
  if (result.encoding === 'utf-8') return result.data;
  const binary = atob(result.data);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return new TextDecoder(encoding === 'latin1' ? 'latin1' : 'utf-8').decode(bytes);
}
