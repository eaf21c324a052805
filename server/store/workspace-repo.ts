/**
 * Locating the workspace's git repository and every object directory it reads
 * from (its own, a linked worktree's common directory, and the
 * `objects/info/alternates` chain). Nothing here writes to the repository.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';

/** Git stops following alternates at this depth; so do we. */
const MAX_ALTERNATE_DEPTH = 5;

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The git directory of the repository containing `workspaceDir` (searching
 * upwards, following `.git` files of worktrees and submodules), or undefined
 * when the workspace is not inside a repository.
 */
export async function findWorkspaceGitDir(workspaceDir: string): Promise<string | undefined> {
  let dir = resolve(workspaceDir);
  for (;;) {
    const dotGit = join(dir, '.git');
    try {
      const s = await stat(dotGit);
      if (s.isDirectory()) return dotGit;
      if (s.isFile()) {
        const match = /^gitdir:\s*(.+?)\s*$/m.exec(await readFile(dotGit, 'utf8'));
        if (match?.[1]) return resolve(dir, match[1]);
      }
    } catch {
      // no .git here; keep walking up
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** The repository's primary `objects` directory (a worktree's objects live in its common directory). */
export async function primaryObjectsDir(gitDir: string): Promise<string> {
  let common = gitDir;
  try {
    const text = (await readFile(join(gitDir, 'commondir'), 'utf8')).trim();
    if (text) common = resolve(gitDir, text);
  } catch {
    // not a linked worktree
  }
  return join(common, 'objects');
}

/** Parses one line of an alternates file; git allows C-style quoting for odd paths. */
function parseAlternateLine(line: string): string | undefined {
  const trimmed = line.trim();
  if (!trimmed || trimmed.startsWith('#')) return undefined;
  if (!trimmed.startsWith('"')) return trimmed;
  try {
    return JSON.parse(trimmed) as string;
  } catch {
    return undefined;
  }
}

/**
 * Every object directory to read, in lookup order: `objectsDir` first, then
 * its alternates depth-first (deduplicated by real path, missing ones skipped).
 */
export async function objectDirsWithAlternates(objectsDir: string): Promise<string[]> {
  const result: string[] = [];
  const seen = new Set<string>();
  const visit = async (dir: string, depth: number): Promise<void> => {
    if (depth > MAX_ALTERNATE_DEPTH || !(await isDirectory(dir))) return;
    const real = await realpath(dir);
    if (seen.has(real)) return;
    seen.add(real);
    result.push(real);
    let text: string;
    try {
      text = await readFile(join(dir, 'info', 'alternates'), 'utf8');
    } catch {
      return;
    }
    for (const line of text.split('\n')) {
      const entry = parseAlternateLine(line);
      if (entry) await visit(isAbsolute(entry) ? entry : resolve(dir, entry), depth + 1);
    }
  };
  await visit(objectsDir, 0);
  return result;
}
