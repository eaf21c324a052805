/**
 * The durable mark of a session that came from outside: `import` writes an
 * `imported` ref beside the session's checkpoints, pointing at a small JSON
 * blob (where it came from, when). Operations read it to treat what the
 * session's checkpoints hold as someone else's data. A mirror cannot set or
 * clear it: import always writes its own and never copies the remote's.
 */
import { sessionRefs } from './checkpoint-format.js';
import { readRef, writeRef } from './refs.js';
import type { WorkspaceStore } from './index.js';

/** What the marker records. */
export interface ImportedMarker {
  /** The mirror's URL (never with credentials: such URLs are refused). */
  url: string;
  /** The mirrored store it came from (`<name>-<id>`). */
  source: string;
  /** When it was imported (ISO 8601). */
  importedAt: string;
}

/** Ref name of a session's marker. */
function importedMarkerRef(sessionId: string): string {
  return `${sessionRefs(sessionId).prefix}imported`;
}

/** Marks a session imported (call before writing its head, so it is never seen unmarked). */
export async function writeImportedMarker(store: WorkspaceStore, sessionId: string, marker: ImportedMarker): Promise<void> {
  const blob = await store.writeObject('blob', Buffer.from(`${JSON.stringify(marker)}\n`));
  await store.flush();
  await writeRef(store.layout.shadowDir, importedMarkerRef(sessionId), blob);
}

/** True when the session came from a mirror. */
export async function isImportedSession(store: WorkspaceStore, sessionId: string): Promise<boolean> {
  return (await readRef(store.layout.shadowDir, importedMarkerRef(sessionId))) !== undefined;
}
