/**
 * The commits a session's turns landed in, kept with the session in its
 * store: one JSON blob under `refs/changeset-server/sessions/<s>/commits`,
 * written and flushed before the ref is replaced atomically (as the
 * session's comments are), so a crash leaves the old list or the new one.
 * Shown on each turn (`_meta.turns[turnId].commits`) and by `status`.
 */
import type { TurnCommit } from '../../protocol/extensions/timeline.js';
import type { RecordingSession } from '../session/recording-session.js';
import { sessionRefs } from '../store/checkpoint-format.js';
import { readRef, writeRef } from '../store/refs.js';

/** Most commits kept per session (the oldest go first). */
const MAX_COMMITS = 2000;

/** One commit and the turns of the session whose lines it added. */
export interface StoredCommitLink {
  oid: string;
  summary: string;
  /** Author time, ISO 8601. */
  at: string;
  /** Turn id → how many of the commit's added lines it wrote. */
  turns: Record<string, number>;
  /** This server attached the commit's authorship note (`serve --notes`). */
  noted?: true;
}

/** What the ref holds. */
export interface StoredCommitLinks {
  version: 1;
  commits: StoredCommitLink[];
}

/** The ref holding a session's commit links. */
function commitLinksRef(sessionId: string): string {
  return `${sessionRefs(sessionId).prefix}commits`;
}

/** The session's commit links as stored; none when it has none or they cannot be read. */
async function readCommitLinks(session: RecordingSession): Promise<StoredCommitLinks> {
  const store = session.files.root(0).store;
  const oid = await readRef(store.layout.shadowDir, commitLinksRef(session.id));
  if (oid === undefined) return { version: 1, commits: [] };
  try {
    const parsed = JSON.parse(Buffer.from((await store.readObject(oid)).content).toString('utf8')) as StoredCommitLinks;
    if (parsed?.version === 1 && Array.isArray(parsed.commits)) return { version: 1, commits: parsed.commits.filter(isLink) };
  } catch {
    // An unreadable list is an empty one: the next commit writes a fresh one.
  }
  return { version: 1, commits: [] };
}

function isLink(value: unknown): value is StoredCommitLink {
  const v = value as StoredCommitLink;
  return typeof v?.oid === 'string' && typeof v.summary === 'string' && typeof v.at === 'string' && typeof v.turns === 'object' && v.turns !== null;
}

/** Each session's links as last read or written: a commit updates them without reading the store again. */
const known = new WeakMap<RecordingSession, Promise<StoredCommitLinks>>();

/** The session's links, read from its store once. */
export function commitLinksOf(session: RecordingSession): Promise<StoredCommitLinks> {
  let links = known.get(session);
  if (!links) {
    links = readCommitLinks(session);
    known.set(session, links);
  }
  return links;
}

/**
 * Adds (or replaces) one commit's link and shows it on the session's turns
 * at once; the link of the commit it replaced (an amend, a rebase), if any,
 * goes. {@link saveCommitLinks} then keeps them in the store.
 */
export async function addCommitLink(session: RecordingSession, replaced: string | undefined, link: StoredCommitLink): Promise<StoredCommitLinks> {
  const stored = await commitLinksOf(session);
  stored.commits = [...stored.commits.filter((c) => c.oid !== link.oid && c.oid !== replaced), link].slice(-MAX_COMMITS);
  showCommitLinks(session, stored);
  return stored;
}

/** Keeps the session's links in its store: the blob written and flushed, then the ref replaced atomically. */
export async function saveCommitLinks(session: RecordingSession, stored: StoredCommitLinks): Promise<void> {
  const store = session.files.root(0).store;
  const oid = await store.writeObject('blob', Buffer.from(JSON.stringify(stored), 'utf8'));
  await store.flush();
  await writeRef(store.layout.shadowDir, commitLinksRef(session.id), oid);
}

/** Puts the stored links on the session's turns (`_meta.turns[turnId].commits`). */
export function showCommitLinks(session: RecordingSession, stored: StoredCommitLinks): void {
  const byTurn = new Map<string, TurnCommit[]>();
  // A turn whose commits were all replaced (amended, rebased) loses them.
  for (const [turnId, stats] of Object.entries(session.meta.turns)) if (stats.commits) byTurn.set(turnId, []);
  for (const c of stored.commits) {
    for (const [turnId, lines] of Object.entries(c.turns)) {
      const list = byTurn.get(turnId) ?? [];
      list.push({ oid: c.oid, summary: c.summary, lines, at: c.at });
      byTurn.set(turnId, list);
    }
  }
  if (byTurn.size > 0) session.timeline.turnCommits(byTurn);
}
