/**
 * `provenance/lines`: who last wrote each line of a file, from the
 * session's record. The file's recorded versions (`file-record.ts`) are
 * taken in order; each is diffed against the one before with the project's
 * line diff, kept lines keep their author and the lines a change wrote get
 * its author (`attribute-change.ts`). Lines an operation put back take the
 * authors of the version it put them back from. Lines already there when
 * recording began are blamed on the workspace repository's commits
 * (`before-recording.ts`).
 *
 * The answer for the newest recorded version is kept per session and file
 * and extended by one diff per new version, so after the first call a turn
 * costs one diff, not a walk of the whole history.
 */
import { relative } from 'node:path';
import { ByteLines } from '../../diff/byte-lines.js';
import {
  isChangesetUriError,
  parseChangesetUri,
  type LineAuthor,
  type ProvenanceParams,
  type ProvenanceRange,
  type ProvenanceResult,
} from '../../protocol/index.js';
import type { RootTrees } from '../changes/collect-changes.js';
import { lookupPath } from '../changes/tree-lookup.js';
import { isBinary } from '../diff/binary.js';
import { invalidParams, notFound } from '../domain-error.js';
import { toSlashes } from '../paths.js';
import type { RecordingSession } from '../session/recording-session.js';
import type { SessionManager } from '../session/session-manager.js';
import { namedFile, type NamedFile } from '../changesets/named-file.js';
import { resolveRef } from '../snapshot/index.js';
import { parseCommit } from '../store/commit.js';
import { attributeChange, type RecordedChange } from './attribute-change.js';
import { beforeRecordingAuthors } from './before-recording.js';
import { recordedSession, recordedStates, type RecordedState, type Version } from './file-record.js';
import { AuthorTable, allBy, carry, restoreFrom, type BlamedLines } from './line-authors.js';

/** Files whose answers one session keeps (the most recently asked). */
const CACHED_FILES = 64;

/** The file as one session sees it. */
type FileRef = NamedFile;

/** The walk's state after some recorded versions: the last version and its lines' authors. */
interface Walked {
  /** Keys of the states walked, in order. */
  keys: string[];
  version: Version;
  /** Undefined when the file is missing or binary there. */
  blamed: BlamedLines | undefined;
  binary: boolean;
}

/** What one session keeps for one file. */
interface FileCache {
  authors: AuthorTable;
  /** The walk up to the newest recorded state. */
  walked: Walked;
  /** The file's version in each tree looked up (`<tree> <path>`). */
  versions: Map<string, Promise<Version>>;
  /** The working tree's version last answered, on top of {@link walked}. */
  current?: { version: Version; blamed: BlamedLines | undefined; binary: boolean; after: string };
}

const caches = new WeakMap<RecordingSession, Map<string, FileCache>>();

/** Drops what was worked out for the session's files: a turn of another session recording the folder ended, and may change whose their changes are. */
export function forgetLineProvenance(session: RecordingSession): void {
  caches.delete(session);
}

/**
 * Who last wrote each line of a file: the file as it is in the working
 * tree now (a snapshot is taken), or as a changeset of the session shows it.
 */
export async function lineProvenance(sessions: SessionManager, params: ProvenanceParams): Promise<ProvenanceResult> {
  const session = sessions.require(params.session);
  const file = namedFile(session, params.path);
  const display = session.files.display({ absPath: file.absPath, root: file.root, path: file.rel });
  const target = await targetOf(session, params);
  const cache = cacheFor(session, file);

  if (target.kind === 'commit') return answer(display, await commitVersion(session, file, target.commit, cache), cache.authors, params);

  const safety = await session.safety.list();
  const { states, active, activeStep } = recordedStates(session, file.absPath, safety);
  const walked = await walkTo(session, file, cache, states, target.kind === 'state' ? target.key : undefined);
  if (target.kind === 'state') return answer(display, walked, cache.authors, params);

  // The working tree now: one more version after the newest recorded one.
  const trees = await session.currentTrees();
  const version = await versionIn(session, file, cache, trees);
  if (sameVersion(version, walked.version)) return answer(display, walked, cache.authors, params);
  const last = states[states.length - 1];
  if (cache.current && sameVersion(cache.current.version, version) && cache.current.after === last?.key)
    return answer(display, cache.current, cache.authors, params);
  const now = new Date().toISOString();
  const who = recordedSession(session);
  const change: RecordedChange = active
    ? {
        kind: 'in-turn',
        session: who,
        turn: active,
        file: file.absPath,
        ...(activeStep ? { step: activeStep } : {}),
        ...(last ? { after: last.at } : {}),
        before: now,
      }
    : {
        kind: 'outside-turns',
        session: who,
        file: file.absPath,
        ...lastEndedTurn(states),
        ...(last ? { after: last.at } : {}),
        before: now,
      };
  const next = await linesOf(session, file, version);
  const blamed = next.lines ? carry(walked.blamed, next.lines, cache.authors.of(attributeChange(change))).blamed : undefined;
  cache.current = { version, blamed, binary: next.binary, after: last?.key ?? '' };
  return answer(display, cache.current, cache.authors, params);
}

/** The last ended turn of the record, for a change after it. */
function lastEndedTurn(states: readonly RecordedState[]): { afterTurn?: NonNullable<Extract<RecordedChange, { kind: 'outside-turns' }>['afterTurn']> } {
  for (let i = states.length - 1; i >= 0; i--) {
    const s = states[i]!;
    if (s.key.endsWith(':end') && s.change?.kind === 'in-turn') return { afterTurn: s.change.turn };
  }
  return {};
}

/** What to blame: the working tree now, a recorded state, or a commit of the workspace repository. */
type Target = { kind: 'current' } | { kind: 'state'; key: string } | { kind: 'commit'; commit: string | undefined };

async function targetOf(session: RecordingSession, params: ProvenanceParams): Promise<Target> {
  if (params.changeset === undefined) return { kind: 'current' };
  const parsed = parseChangesetUri(params.changeset);
  if (isChangesetUriError(parsed)) throw invalidParams(`changeset: ${parsed.message}`);
  if (parsed.sessionId !== session.id) throw invalidParams(`changeset: ${params.changeset} is not a changeset of session ${session.uri}`);
  const before = params.side === 'before';
  const turn = (id: string) => {
    const t = session.turn(id);
    if (!t) throw notFound(`changeset: no turn ${JSON.stringify(id)} in session ${session.uri}`);
    return t;
  };
  const ended = (id: string) => {
    const t = turn(id);
    if (!t.after) throw invalidParams(`changeset: turn ${session.turns.indexOf(t) + 1} is still in progress`);
    return t;
  };
  switch (parsed.kind) {
    case 'session': {
      if (before) return { kind: 'state', key: 'start' };
      if (!session.isEnded) return { kind: 'current' };
      const last = [...session.turns].reverse().find((t) => t.after);
      return { kind: 'state', key: last ? `t:${last.id}:end` : 'start' };
    }
    case 'turn':
      return { kind: 'state', key: before ? `t:${turn(parsed.turnId!).id}:start` : `t:${ended(parsed.turnId!).id}:end` };
    case 'step': {
      const t = turn(parsed.turnId!);
      const n = parsed.step!;
      const count = t.steps?.length ?? 0;
      if (n > count) throw notFound(`changeset: turn ${session.turns.indexOf(t) + 1} has no step ${n}`);
      if (before) return { kind: 'state', key: `t:${t.id}:s:${n}` };
      if (n < count) return { kind: 'state', key: `t:${t.id}:s:${n + 1}` };
      return { kind: 'state', key: `t:${ended(t.id).id}:end` };
    }
    case 'since': {
      if (!before) return { kind: 'current' };
      const t = turn(parsed.turnId!);
      if (parsed.step === undefined) return { kind: 'state', key: `t:${t.id}:start` };
      if (parsed.step > (t.steps?.length ?? 0)) throw notFound(`changeset: turn ${session.turns.indexOf(t) + 1} has no step ${parsed.step}`);
      return { kind: 'state', key: `t:${t.id}:s:${parsed.step}` };
    }
    case 'compare-turns':
      return { kind: 'state', key: `t:${ended(before ? parsed.originalTurnId! : parsed.modifiedTurnId!).id}:end` };
    case 'uncommitted':
    case 'branch': {
      if (!before) return { kind: 'current' };
      const repo = session.files.root(0).repository;
      return { kind: 'commit', commit: repo ? resolveRef(repo, 'HEAD') : undefined };
    }
  }
}

/**
 * The walk up to `key` (undefined: the newest recorded state). The newest
 * is kept and extended by the versions recorded since; an older state, or a
 * record that changed under it (turns dropped), is walked from the start.
 */
async function walkTo(session: RecordingSession, file: FileRef, cache: FileCache, states: readonly RecordedState[], key: string | undefined): Promise<Walked> {
  const end = key === undefined ? states.length : states.findIndex((s) => s.key === key) + 1;
  if (end === 0) throw notFound(`changeset: the record holds no such state of ${file.rel}`);
  const upTo = states.slice(0, end);
  const kept = cache.walked;
  // What is kept is a walk over the first states of the record, as long as the record still begins with them.
  const valid = kept.keys.length > 0 && kept.keys.length <= states.length && kept.keys.every((k, i) => k === states[i]!.key);
  const extend = valid && kept.keys.length <= upTo.length;
  // Lines an operation puts back come from an earlier version: such a tail is walked whole, keeping those versions.
  const tailWrites = upTo.slice(extend ? kept.keys.length : 0).some((s) => s.write);
  const walked = await walk(session, file, cache, upTo, extend && !tailWrites ? kept : undefined);
  // The longest walk is kept (a state before it is walked again from the start when asked for).
  if (!valid || walked.keys.length >= kept.keys.length) cache.walked = walked;
  return walked;
}

/** Walks `states` from `from` (or the start), carrying each line's author. */
async function walk(session: RecordingSession, file: FileRef, cache: FileCache, states: readonly RecordedState[], from: Walked | undefined): Promise<Walked> {
  const keys = from ? [...from.keys] : [];
  let version = from?.version;
  let blamed = from?.blamed;
  let binary = from?.binary ?? false;
  // The versions operations may put lines back from: by blob, and by state.
  const wanted = new Set(states.flatMap((s) => (s.write ? [s.write.from, s.version?.oid] : [])).filter((k): k is string => k !== undefined));
  const kept = new Map<string, BlamedLines>();
  const keep = (state: RecordedState, v: Version, b: BlamedLines | undefined) => {
    if (!b) return;
    if (wanted.has(state.key)) kept.set(state.key, b);
    if (v && wanted.has(v.oid)) kept.set(v.oid, b);
  };
  for (let i = keys.length; i < states.length; i++) {
    const state = states[i]!;
    keys.push(state.key);
    const next = state.trees ? await versionIn(session, file, cache, state.trees) : state.version;
    if (i === 0) {
      // The first recorded version: its lines were there before recording began.
      version = next;
      const read = await linesOf(session, file, next);
      binary = read.binary;
      blamed = read.lines ? await firstLines(session, file, read.lines, cache.authors) : undefined;
      keep(state, version, blamed);
      continue;
    }
    if (sameVersion(version, next)) {
      keep(state, version, blamed);
      continue;
    }
    const read = await linesOf(session, file, next);
    binary = read.binary;
    const author = cache.authors.of(attributeChange(state.change!));
    if (!read.lines) blamed = undefined;
    else {
      const { blamed: carried, inserted } = carry(blamed, read.lines, author);
      if (state.write) {
        // The version an operation wrote: its lines that an earlier version held keep that version's authors.
        const source = (next && kept.get(next.oid)) ?? (state.write.from ? kept.get(state.write.from) : undefined);
        if (source) restoreFrom(carried, inserted, source);
      }
      blamed = carried;
    }
    version = next;
    keep(state, version, blamed);
  }
  return { keys, version, blamed, binary };
}

/** The first recorded version's lines, blamed on the workspace repository's commits. */
async function firstLines(session: RecordingSession, file: FileRef, lines: ByteLines, authors: AuthorTable): Promise<BlamedLines> {
  const found = await beforeRecordingAuthors(session, file.root, file.absPath, lines, session.createdAt);
  const blamed = allBy(lines, 0);
  for (let i = 0; i < found.length; i++) blamed.authors[i] = authors.of(found[i]!);
  return blamed;
}

/** A commit's version of the file (the `before` side of `uncommitted`): every line before recording. */
async function commitVersion(session: RecordingSession, file: FileRef, commit: string | undefined, cache: FileCache): Promise<Omit<Walked, 'keys'>> {
  const root = session.files.root(file.root);
  const source = session.files.source(file.root);
  if (!commit || !root.repository) return { version: undefined, blamed: undefined, binary: false };
  const tree = parseCommit((await source.store.readObject(commit)).content, commit).tree;
  const path = toSlashes(relative(root.repository.workTree, file.absPath));
  const entry = await lookupPath(source.reader, tree, path);
  const version: Version = entry && !/^0?40000$/.test(entry.mode) ? entry : undefined;
  const read = await linesOf(session, file, version);
  if (!read.lines) return { version, blamed: undefined, binary: read.binary };
  const found = await beforeRecordingAuthors(session, file.root, file.absPath, read.lines, new Date().toISOString());
  const blamed = allBy(read.lines, 0);
  for (let i = 0; i < found.length; i++) blamed.authors[i] = cache.authors.of(found[i]!);
  return { version, blamed, binary: false };
}

/** The file's lines in one version; none where it is missing or binary. */
async function linesOf(session: RecordingSession, file: FileRef, version: Version): Promise<{ lines?: ByteLines; binary: boolean }> {
  if (!version || version.mode === '160000') return { binary: false };
  const content = (await session.files.source(file.root).store.readObject(version.oid)).content;
  if (isBinary(content)) return { binary: true };
  return { lines: new ByteLines(content), binary: false };
}

/** The file's version in one recorded state (looked up once per tree). */
function versionIn(session: RecordingSession, file: FileRef, cache: FileCache, trees: readonly RootTrees[]): Promise<Version> {
  const at = trees[file.root];
  if (!at) return Promise.resolve(undefined);
  // The innermost nested repository holding the path, else the working directory's own tree.
  let nested: { path: string; tree: string } | undefined;
  for (const n of at.nested) if (file.rel.startsWith(`${n.path}/`) && (!nested || n.path.length > nested.path.length)) nested = n;
  const tree = nested ? nested.tree : at.tree;
  const path = nested ? file.rel.slice(nested.path.length + 1) : file.rel;
  const key = `${tree} ${path}`;
  let found = cache.versions.get(key);
  if (!found) {
    found = lookupPath(session.files.source(file.root).reader, tree, path).then((e) => (e && !/^0?40000$/.test(e.mode) ? e : undefined));
    cache.versions.set(key, found);
    found.catch(() => cache.versions.delete(key));
  }
  return found;
}

/** The answer: the lines asked for, in ranges of one author, and those authors. */
function answer(path: string, walked: Omit<Walked, 'keys'>, table: AuthorTable, params: ProvenanceParams): ProvenanceResult {
  if (!walked.version) return { path, lineCount: 0, ranges: [], authors: [], missing: true };
  if (walked.binary || !walked.blamed) return { path, lineCount: 0, ranges: [], authors: [], ...(walked.binary ? { binary: true as const } : {}) };
  const { authors, restored } = walked.blamed;
  const lineCount = authors.length;
  const first = Math.max(1, params.startLine ?? 1);
  const last = Math.min(lineCount, params.endLine ?? lineCount);
  const ranges: ProvenanceRange[] = [];
  const used = new Map<number, number>();
  const list: LineAuthor[] = [];
  for (let line = first; line <= last; ) {
    const a = authors[line - 1]!;
    const r = restored[line - 1]!;
    let end = line;
    while (end < last && authors[end]! === a && restored[end]! === r) end++;
    let index = used.get(a);
    if (index === undefined) {
      index = list.length;
      list.push(table.list[a]!);
      used.set(a, index);
    }
    ranges.push({ startLine: line, endLine: end, author: index, ...(r ? { restored: true as const } : {}) });
    line = end + 1;
  }
  return { path, lineCount, ranges, authors: list };
}

function cacheFor(session: RecordingSession, file: FileRef): FileCache {
  let files = caches.get(session);
  if (!files) {
    files = new Map();
    caches.set(session, files);
  }
  let cache = files.get(file.absPath);
  if (cache) {
    // Most recently asked last.
    files.delete(file.absPath);
  } else {
    cache = { authors: new AuthorTable(), walked: { keys: [], version: undefined, blamed: undefined, binary: false }, versions: new Map() };
    while (files.size >= CACHED_FILES) files.delete(files.keys().next().value!);
  }
  files.set(file.absPath, cache);
  return cache;
}

function sameVersion(a: Version, b: Version): boolean {
  return a === b || (a !== undefined && b !== undefined && a.oid === b.oid && a.mode === b.mode);
}
