/**
 * Who wrote the lines a commit added, from the record: each committed file
 * is mapped line by line (the project's line diff) onto the file as the
 * session last recorded it at a turn's end, whose provenance says who wrote
 * each line. A committed line the record does not hold there — typed after
 * the last turn, or never seen — is the user's.
 */
import { join, relative } from 'node:path';
import { formatChangesetUri } from '../../protocol/index.js';
import type { LineAuthor, ProvenanceParams, ProvenanceResult, TurnAuthor } from '../../protocol/extensions/provenance.js';
import { lookupPath } from '../changes/tree-lookup.js';
import { isInsideDir, toSlashes } from '../paths.js';
import type { RecordingSession } from '../session/recording-session.js';
import type { TurnRecord } from '../session/turn-record.js';
import type { TreeReader } from '../store/tree.js';
import type { ObjectStore } from '../store/types.js';
import { blobLines, committedFiles, lineMapping, readCommit, type CommitInfo, type CommittedFile } from './commit-lines.js';

/** Who last wrote each line of a file, as the provenance engine answers `provenance/lines`. */
export type LineProvenance = (params: ProvenanceParams) => Promise<ProvenanceResult>;

/** A committed file with the turn that wrote each added line (undefined: the user, or not known). */
interface AttributedFile extends CommittedFile {
  /** Parallel to `added`. */
  authors: (TurnAuthor | undefined)[];
}

/** A commit and who wrote what it added. */
export interface CommitAttribution {
  commit: CommitInfo;
  files: AttributedFile[];
  /** Turn authors by `session turnId`, each once, with how many added lines they wrote. */
  turns: { author: TurnAuthor; lines: number }[];
}

/** Where the repository is and which sessions recorded it. */
interface CommitContext {
  /** Top of the repository's working tree. */
  workTree: string;
  /** Sessions recording inside it, the newest first: the first that wrote a line is named. */
  sessions: readonly RecordingSession[];
  provenance: LineProvenance;
  /** Reads the repository's objects (a session's store reads them in place). */
  source: { store: ObjectStore; reader: TreeReader };
}

/** The last ended turn of a session, whose end is the newest complete recorded state. */
function lastEndedTurn(session: RecordingSession): TurnRecord | undefined {
  const turns = session.turns;
  for (let i = turns.length - 1; i >= 0; i--) if (turns[i]!.after) return turns[i];
  return undefined;
}

/** Attributes the lines `commitOid` added. */
export async function attributeCommit(ctx: CommitContext, commitOid: string): Promise<CommitAttribution> {
  const source = ctx.source;
  const commit = await readCommit(source.store, commitOid);
  const files = (await committedFiles(source.store, source.reader, commit)).map(
    (f): AttributedFile => ({ ...f, authors: new Array<TurnAuthor | undefined>(f.added.length).fill(undefined) }),
  );
  for (const session of ctx.sessions) {
    const turn = lastEndedTurn(session);
    if (!turn?.after) continue;
    // The files one after another would each wait for its reads; together they overlap.
    await Promise.all(files.map((file) => attributeFile(ctx, session, turn, file)));
  }
  const turns = new Map<string, { author: TurnAuthor; lines: number }>();
  for (const file of files) {
    for (const author of file.authors) {
      if (!author) continue;
      const key = `${author.session} ${author.turnId}`;
      const entry = turns.get(key) ?? { author, lines: 0 };
      entry.lines++;
      turns.set(key, entry);
    }
  }
  return { commit, files, turns: [...turns.values()] };
}

/** Gives the added lines of `file` that the session's record holds at the turn's end their turn, where none has one yet. */
async function attributeFile(ctx: CommitContext, session: RecordingSession, turn: TurnRecord, file: AttributedFile): Promise<void> {
  if (file.authors.every((a) => a !== undefined)) return;
  const absPath = join(ctx.workTree, ...file.path.split('/'));
  const root = session.files.rootIndexOf(absPath);
  if (root < 0 || !isInsideDir(session.files.root(root).dir, absPath)) return;
  const recorded = await recordedLines(session, turn, root, toSlashes(relative(session.files.root(root).dir, absPath)));
  if (!recorded) return;
  const prov = await ctx.provenance({
    session: session.uri,
    path: absPath,
    changeset: formatChangesetUri({ sessionId: session.id, kind: 'turn', turnId: turn.id }),
    side: 'after',
  });
  if (prov.binary || prov.missing || prov.lineCount !== recorded.length) return;
  const byLine = authorsByLine(prov, recorded.length);
  const map = lineMapping(recorded, file.lines);
  file.added.forEach((line, i) => {
    if (file.authors[i] !== undefined) return;
    const from = map[line - 1]!;
    const author = from > 0 ? byLine[from - 1] : undefined;
    if (author?.kind === 'turn') file.authors[i] = author;
  });
}

/** The file's lines at the turn's end, or undefined where it was not a text file there. */
async function recordedLines(session: RecordingSession, turn: TurnRecord, root: number, rel: string): Promise<string[] | undefined> {
  const trees = turn.after?.[root];
  if (!trees) return undefined;
  const source = session.files.source(root);
  const entry = await lookupPath(source.reader, trees.tree, rel);
  if (!entry?.mode.startsWith('100')) return undefined;
  return blobLines((await source.store.readObject(entry.oid)).content);
}

/** Each line's author (0-based index), from the answer's ranges. */
function authorsByLine(prov: ProvenanceResult, lineCount: number): (LineAuthor | undefined)[] {
  const out = new Array<LineAuthor | undefined>(lineCount);
  for (const r of prov.ranges) for (let n = r.startLine; n <= r.endLine && n <= lineCount; n++) out[n - 1] = prov.authors[r.author];
  return out;
}
