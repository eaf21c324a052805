import { watch, type FSWatcher } from 'node:fs';
import { isAbsolute, relative, sep } from 'node:path';

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
 * Watches directories recursively and reports changes outside `.git`
 * directories and the ignored directories. Throws when a watch cannot be
 * set up (the caller falls back to polling).
 */
export function watchWorkspaces(options: WorkspaceWatchOptions): WorkspaceWatch {
  const watchers: FSWatcher[] = [];
  let closed = false;
  const close = (): void => {
    closed = true;
    for (const w of watchers.splice(0)) w.close();
  };
  try {
    for (const dir of options.directories) {
      const ignored = (options.ignoreDirs ?? []).map((d) => relative(dir, d)).filter((rel) => rel !== '' && !rel.startsWith('..') && !isAbsolute(rel));
      const watcher = watch(dir, { recursive: true, persistent: false }, (_event, filename) => {
        if (closed) return;
        const name = filename === null ? undefined : String(filename);
        if (name !== undefined && isIgnored(name, ignored)) return;
        options.onChange();
      });
      watcher.on('error', (error) => {
        if (closed) return;
        close();
        options.onError(error);
      });
      watchers.push(watcher);
    }
  } catch (error) {
    close();
    throw error;
  }
  return { close };
}

/** Events inside a `.git` directory (of the workspace or a nested repository) or an ignored directory are not workspace changes. */
function isIgnored(name: string, ignoredDirs: readonly string[]): boolean {
  if (name.split(sep).includes('.git')) return true;
  return ignoredDirs.some((d) => name === d || name.startsWith(`${d}${sep}`));
}
