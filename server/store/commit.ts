/** Commit objects: the subset of the format checkpoints write and read. */
import { CorruptObjectError } from './errors.js';

/** A parsed commit. */
export interface CommitObject {
  /** The root tree id. */
  tree: string;
  /** Parent commit ids, in order. */
  parents: string[];
  /** The raw `author` line value (`Name <email> seconds zone`). */
  author: string;
  /** The raw `committer` line value. */
  committer: string;
  /** Everything after the blank line that ends the headers. */
  message: string;
}

/** Identity recorded on checkpoint commits. */
const CHECKPOINT_IDENTITY = 'changeset-server <changeset-server@localhost>';

/** Serialises a commit; `when` becomes the author and committer time (UTC). */
export function serializeCommit(tree: string, parents: readonly string[], message: string, when: Date): Buffer {
  const stamp = `${CHECKPOINT_IDENTITY} ${Math.floor(when.getTime() / 1000)} +0000`;
  const lines = [`tree ${tree}`, ...parents.map((p) => `parent ${p}`), `author ${stamp}`, `committer ${stamp}`];
  return Buffer.from(`${lines.join('\n')}\n\n${message.endsWith('\n') ? message : `${message}\n`}`, 'utf8');
}

/** Parses commit content. `oid` only names the commit in error messages. */
export function parseCommit(content: Uint8Array, oid = 'commit'): CommitObject {
  const text = Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('utf8');
  const split = text.indexOf('\n\n');
  const head = split < 0 ? text : text.slice(0, split);
  const message = split < 0 ? '' : text.slice(split + 2);
  let tree: string | undefined;
  const parents: string[] = [];
  let author = '';
  let committer = '';
  for (const line of head.split('\n')) {
    if (line.startsWith('tree ')) tree = line.slice(5);
    else if (line.startsWith('parent ')) parents.push(line.slice(7));
    else if (line.startsWith('author ')) author = line.slice(7);
    else if (line.startsWith('committer ')) committer = line.slice(10);
  }
  if (!tree) throw new CorruptObjectError(`commit ${oid} has no tree`);
  return { tree, parents, author, committer, message };
}
