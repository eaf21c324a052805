/** Recording turns of one-line edits straight into a store, for the delta tests: nested trees as a snapshot writes them. */
import { serializeTree, type WorkspaceStore } from '../../server/store/index.js';

const enc = new TextEncoder();

/** A file of `lines` lines of source-like text, different for each `seed`. */
export function sourceFile(seed: number, lines: number): string {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) out.push(`export function f${seed}_${i}(value: number): number { return value * ${(seed * 31 + i * 7) % 97} + ${i}; }`);
  return `${out.join('\n')}\n`;
}

/** Changes line `line` of a file. */
export function editLine(text: string, line: number, tag: string): string {
  const lines = text.split('\n');
  const at = line % Math.max(1, lines.length - 1);
  lines[at] = `${lines[at]} // ${tag}`;
  return lines.join('\n');
}

/** Writes the files as blobs and nested trees; returns the root tree. */
export async function writeFiles(store: WorkspaceStore, files: ReadonlyMap<string, string>): Promise<string> {
  interface Dir {
    files: Map<string, string>;
    dirs: Map<string, Dir>;
  }
  const root: Dir = { files: new Map(), dirs: new Map() };
  for (const [path, text] of files) {
    const parts = path.split('/');
    let dir = root;
    for (const part of parts.slice(0, -1)) {
      let next = dir.dirs.get(part);
      if (!next) dir.dirs.set(part, (next = { files: new Map(), dirs: new Map() }));
      dir = next;
    }
    dir.files.set(parts.at(-1)!, await store.writeObject('blob', enc.encode(text)));
  }
  const write = async (dir: Dir): Promise<string> => {
    const entries: { mode: string; name: string; oid: string }[] = [];
    for (const [name, oid] of dir.files) entries.push({ mode: '100644', name, oid });
    for (const [name, sub] of dir.dirs) entries.push({ mode: '40000', name, oid: await write(sub) });
    return store.writeObject('tree', serializeTree(entries));
  };
  return write(root);
}

/** Every version of every file a recording wrote, to read back. */
export type Versions = Map<string, string>;

/**
 * Records `turns` turns of a session: each turn edits one line in each of
 * `perTurn` files (chosen round-robin from `paths`), then writes the turn's
 * start and end checkpoints. Returns every blob written (id → text).
 */
export async function recordTurns(
  store: WorkspaceStore,
  sessionId: string,
  files: Map<string, string>,
  options: { turns: number; perTurn: number; firstTurn?: number; versions?: Versions; entries?: boolean },
): Promise<Versions> {
  const versions = options.versions ?? new Map<string, string>();
  const paths = [...files.keys()];
  const first = options.firstTurn ?? 0;
  for (let t = first; t < first + options.turns; t++) {
    const turnId = `turn-${t}`;
    const before = await writeFiles(store, files);
    await store.writeCheckpoint({ sessionId, kind: 'start', turnId, tree: before });
    for (let k = 0; k < options.perTurn; k++) {
      const path = paths[(t * options.perTurn + k) % paths.length]!;
      files.set(path, editLine(files.get(path)!, t * 13 + k * 5, `${sessionId} turn ${t}`));
    }
    const after = await writeFiles(store, files);
    for (const text of files.values()) versions.set(await store.writeObject('blob', enc.encode(text)), text);
    await store.writeCheckpoint({
      sessionId,
      kind: 'end',
      turnId,
      tree: after,
      turn: { state: 'complete' },
      ...(options.entries === false ? {} : { entries: { turn: t, files: paths.slice(0, options.perTurn) } }),
    });
  }
  return versions;
}
