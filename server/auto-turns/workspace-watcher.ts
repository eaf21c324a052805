import { isAbsolute, relative, sep } from 'node:path';
import { DirectoryWatcher, type DirectoryEvent } from '../watch/directory-watcher.js';

/** Options of {@link watchWorkspaces}. */
export interface WorkspaceWatchOptions {
  /** Directories to watch, recursively. */
  directories: readonly string[];
  /** Directories whose events are ignored (the server's state directory). */
  ignoreDirs?: readonly string[];
  /** Called for each event that may be a workspace change. */
  onChange: () => void;
  /** Called once when watching fails; the watchers are closed by then. */
  onError: (error: Error) => void;
}

/** A running set of directory watchers. */
export interface WorkspaceWatch {
  close(): void;
}

/**
 * Watches directories recursively, through the one watcher per directory
 * the process shares, and reports changes outside `.git` directories and
 * the ignored directories.
 */
export function watchWorkspaces(options: WorkspaceWatchOptions): WorkspaceWatch {
  const stops: (() => void)[] = [];
  const watchers: DirectoryWatcher[] = [];
  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    for (const stop of stops.splice(0)) stop();
    for (const w of watchers.splice(0)) void w.release();
  };
  for (const dir of options.directories) {
    const ignored = (options.ignoreDirs ?? []).map((d) => relative(dir, d)).filter((rel) => rel !== '' && !rel.startsWith('..') && !isAbsolute(rel));
    const watcher = DirectoryWatcher.acquire(dir, { ignore: options.ignoreDirs ?? [] });
    watchers.push(watcher);
    stops.push(
      watcher.onEvents((events) => {
        if (!closed && events.some((e) => isWorkspaceChange(dir, e, ignored))) options.onChange();
      }),
      watcher.onFailure((error) => {
        if (closed) return;
        close();
        options.onError(error);
      }),
    );
    if (watcher.state === 'failed') {
      close();
      options.onError(new Error(watcher.lastError ?? 'the directory cannot be watched'));
      break;
    }
  }
  return { close };
}

/**
 * Events inside a `.git` directory (of the workspace or a nested
 * repository) or an ignored directory are not workspace changes, nor is the
 * directory's own attribute change (snapshots use it to synchronise).
 */
function isWorkspaceChange(dir: string, event: DirectoryEvent, ignoredDirs: readonly string[]): boolean {
  if (event.path === dir) return false;
  const name = relative(dir, event.path);
  if (name.split(sep).includes('.git')) return false;
  return !ignoredDirs.some((d) => name === d || name.startsWith(`${d}${sep}`));
}
