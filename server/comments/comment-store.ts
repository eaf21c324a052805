/**
 * Reading and writing a session's comments blob in its store: the blob is
 * written and flushed first, then the ref is replaced atomically (temporary
 * file, fsync, rename), so a crash at any moment leaves the old list or the
 * new one, never a mix.
 */
import type { RecordingSession } from '../session/recording-session.js';
import { sessionRefs } from '../store/checkpoint-format.js';
import { readRef, writeRef } from '../store/refs.js';
import { emptyComments, parseStoredComments, serializeComments, type StoredComments } from './stored.js';

/** The ref holding a session's comments. */
export function commentsRef(sessionId: string): string {
  return `${sessionRefs(sessionId).prefix}comments`;
}

/** The session's comments as stored; an empty list when it has none. */
export async function readComments(session: RecordingSession): Promise<StoredComments> {
  const store = session.files.root(0).store;
  const oid = await readRef(store.layout.shadowDir, commentsRef(session.id));
  if (oid === undefined) return emptyComments();
  return parseStoredComments((await store.readObject(oid)).content, session.id);
}

/** Replaces the session's comments in its store. */
export async function writeComments(session: RecordingSession, stored: StoredComments): Promise<void> {
  const store = session.files.root(0).store;
  const oid = await store.writeObject('blob', serializeComments(stored));
  await store.flush();
  await writeRef(store.layout.shadowDir, commentsRef(session.id), oid);
}
