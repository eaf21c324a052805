/**
 * Finding git repositories on disk without a git executable: `.git`
 * directories, `.git` files with `gitdir:` (worktrees, submodules),
 * `commondir`, and resolving HEAD to a commit id. Read-only.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fsPath } from '../path-bytes.js';

/** Where a repository lives on disk. */
export interface GitRepositoryLocation {
  /** Top of the working tree (the directory holding `.git`). */
  workTree: string;
  /** The repository's git directory (per-worktree for linked worktrees). */
  gitDir: string;
  /** The directory holding objects, refs and config shared by all worktrees. */
  commonDir: string;
  /** The object database directory (`<commonDir>/objects`). */
  objectsDir: string;
  /** The index file the repository's working tree uses. */
  indexFile: string;
}

const OID_RE = /^[0-9a-f]{40}$/;

function isDirectory(p: string): boolean {
  try {
    return statSync(fsPath(p)).isDirectory();
  } catch {
    return false;
  }
}

function readText(p: string): string | undefined {
  try {
    return readFileSync(fsPath(p), 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Resolves the git directory a `.git` entry stands for: the directory itself,
 * or the target of a `gitdir: <path>` file. Returns undefined when it is not a
 * valid git directory (git then treats the parent as an ordinary directory).
 */
export function resolveDotGit(dotGitPath: string): { gitDir: string; commonDir: string } | undefined {
  let gitDir: string;
  if (isDirectory(dotGitPath)) {
    gitDir = dotGitPath;
  } else {
    const text = readText(dotGitPath);
    const m = text === undefined ? null : /^gitdir: *(.+?)\s*$/m.exec(text);
    if (!m) return undefined;
    gitDir = resolve(dirname(dotGitPath), m[1]!);
  }
  const common = readText(join(gitDir, 'commondir'));
  const commonDir = common === undefined ? gitDir : resolve(gitDir, common.trim());
  if (!isValidGitDir(gitDir, commonDir)) return undefined;
  return { gitDir, commonDir };
}

/** Git's `is_git_directory`: a HEAD that parses, plus objects and refs dirs. */
function isValidGitDir(gitDir: string, commonDir: string): boolean {
  const head = readText(join(gitDir, 'HEAD'));
  if (head === undefined) return false;
  const h = head.trim();
  if (!h.startsWith('ref: refs/') && !OID_RE.test(h)) return false;
  return isDirectory(join(commonDir, 'objects')) && isDirectory(join(commonDir, 'refs'));
}

/**
 * Finds the repository `dir` is in (or is the top of), walking up towards the
 * filesystem root. Returns undefined outside any repository. Environment
 * variables such as GIT_DIR are not consulted.
 */
export function findGitRepository(dir: string): GitRepositoryLocation | undefined {
  let cur = resolve(dir);
  for (;;) {
    // A path inside a .git directory is not inside a working tree.
    if (cur.split(sep).includes('.git')) return undefined;
    const found = resolveDotGit(join(cur, '.git'));
    if (found) {
      return {
        workTree: cur,
        gitDir: found.gitDir,
        commonDir: found.commonDir,
        objectsDir: join(found.commonDir, 'objects'),
        indexFile: join(found.gitDir, 'index'),
      };
    }
    const parent = dirname(cur);
    if (parent === cur) return undefined;
    cur = parent;
  }
}

/** The path of `dir` relative to the working tree top, '/'-separated, with a trailing '/' ('' at the top). */
export function pathInWorkTree(workTree: string, dir: string): string {
  const rel = relative(workTree, resolve(dir));
  if (rel === '') return '';
  if (rel.startsWith('..') || isAbsolute(rel)) throw new Error(`${dir} is not inside ${workTree}`);
  return rel.split(sep).join('/') + '/';
}

function lookupPackedRef(commonDir: string, ref: string): string | undefined {
  const packed = readText(join(commonDir, 'packed-refs'));
  if (packed === undefined) return undefined;
  for (const line of packed.split('\n')) {
    if (line.length > 41 && line.charCodeAt(40) === 0x20 && line.slice(41) === ref) {
      const oid = line.slice(0, 40);
      if (OID_RE.test(oid)) return oid;
    }
  }
  return undefined;
}

/**
 * The commit a ref (`HEAD`, `refs/heads/main`, …) points at, following
 * symbolic refs; undefined when it names a branch with no commit yet (a
 * freshly initialised repository) or does not exist.
 */
export function resolveRef(repo: Pick<GitRepositoryLocation, 'gitDir' | 'commonDir'>, name: string): string | undefined {
  const { gitDir, commonDir } = repo;
  let ref = name;
  for (let depth = 0; depth < 10; depth++) {
    // Per-worktree refs (HEAD, refs/bisect...) live in gitDir, the rest in commonDir.
    const text = readText(join(gitDir, ref)) ?? readText(join(commonDir, ref));
    if (text === undefined) return lookupPackedRef(commonDir, ref);
    const value = text.trim();
    if (value.startsWith('ref: ')) {
      ref = value.slice(5).trim();
      continue;
    }
    return OID_RE.test(value) ? value : undefined;
  }
  return undefined;
}

/** The commit HEAD points at (see {@link resolveRef}). */
export function readHeadCommit(gitDir: string, commonDir: string): string | undefined {
  return resolveRef({ gitDir, commonDir }, 'HEAD');
}
