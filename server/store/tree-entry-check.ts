/**
 * A tree object from outside (an imported mirror) read the way `git fsck`
 * reads one: every entry has one of the five modes git writes, a name that
 * is a single component git would write into a working tree (see
 * `git-path.ts`), no two entries share a name, and the entries are in git's
 * order. The store's own `parseTree` is lenient on purpose (it reads what
 * the local recorder wrote); this is the strict reading for what comes in.
 */
import { quotedName, refusedComponent } from '../git-path.js';
import { decodePathBytes } from '../path-bytes.js';
import { compareTreeEntries, GITLINK_MODE, type TreeEntry } from './tree.js';

/** The modes git writes in trees, as stored (a directory's without its leading zero). */
const MODES: ReadonlyMap<string, { mode: string; kind: TreeEntry['kind'] }> = new Map([
  ['100644', { mode: '100644', kind: 'blob' }],
  ['100755', { mode: '100755', kind: 'blob' }],
  ['120000', { mode: '120000', kind: 'blob' }],
  [GITLINK_MODE, { mode: GITLINK_MODE, kind: 'commit' }],
  ['40000', { mode: '040000', kind: 'tree' }],
]);

/** A tree entry (or the tree itself, when `name` is undefined) that `git fsck` would report. */
export class BadTreeEntryError extends Error {
  constructor(
    /** The entry's name as `decodePathBytes` gives it; undefined when the tree cannot be read as entries at all. */
    readonly entryName: string | undefined,
    /** What is wrong, as a phrase following the name ("is a .git directory …"). */
    readonly problem: string,
  ) {
    super(entryName === undefined ? `a tree ${problem}` : `${quotedName(entryName)} ${problem}`);
  }
}

/** Parses a tree object's content, throwing {@link BadTreeEntryError} at the first entry `git fsck` would report. */
export function checkTreeEntries(content: Uint8Array): TreeEntry[] {
  const buf = Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  const entries: TreeEntry[] = [];
  const seen = new Set<string>();
  let i = 0;
  while (i < buf.byteLength) {
    const space = buf.indexOf(0x20, i);
    const nul = space < 0 ? -1 : buf.indexOf(0, space + 1);
    if (space < 0 || nul < 0 || nul + 21 > buf.byteLength) throw new BadTreeEntryError(undefined, 'is truncated or malformed');
    const nameBytes = buf.subarray(space + 1, nul);
    const name = decodePathBytes(nameBytes);
    const rawMode = buf.toString('latin1', i, space);
    const known = MODES.get(rawMode);
    if (!known) {
      throw new BadTreeEntryError(
        name,
        rawMode === '040000'
          ? 'has the mode 040000 written with a leading zero, which git never writes'
          : `has the mode ${JSON.stringify(rawMode)}, which is not a file, link, directory or submodule mode`,
      );
    }
    const problem = refusedComponent(nameBytes);
    if (problem) throw new BadTreeEntryError(name, problem);
    const key = nameBytes.toString('latin1');
    if (seen.has(key)) throw new BadTreeEntryError(name, 'appears twice in the same directory');
    seen.add(key);
    const entry: TreeEntry = { mode: known.mode, name, nameBytes, oid: buf.toString('hex', nul + 1, nul + 21), kind: known.kind };
    const previous = entries[entries.length - 1];
    if (previous && compareTreeEntries(previous, entry) >= 0)
      throw new BadTreeEntryError(name, 'is out of order (git sorts the entries of a directory by name)');
    entries.push(entry);
    i = nul + 21;
  }
  return entries;
}
