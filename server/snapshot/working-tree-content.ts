/**
 * The way back out: what `git checkout` would write for a blob the
 * snapshot stored, so a file put back by an operation gets the line endings
 * its attributes and `core.autocrlf` / `core.eol` give it (the smudge side
 * of the conversion `walker.ts` applies on the way in).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fsPath } from '../path-bytes.js';
import { cleanClass, cleanContent, crlfAction, EOL_AUTO, EOL_KEEP, hasCrlfText, smudgeContent } from './eol-conversion.js';
import { AttributeStack, parseAttributes, type AttributeLevel } from './git-attributes.js';
import { DEFAULT_CORE_SETTINGS, globalGitFiles, readCoreSettings, readFilterDrivers, type CoreSettings, type GitEnvironment } from './git-config.js';
import { findGitRepository, pathInWorkTree, type GitRepositoryLocation } from './git-repository.js';
import { encodeToGit, encodeToWorktree, identToGit, identToWorktree, workingTreeEncoding } from './content-conversion.js';

function readText(path: string): string | undefined {
  try {
    return readFileSync(fsPath(path), 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * How git converts one path between what it stores and what the working
 * tree holds: `smudge` is what `git checkout` writes for a stored blob,
 * `clean` what `git add` would store for bytes on disk (without the index
 * check of "safer autocrlf", see `keepsCrlf`).
 */
export interface CheckoutConversion {
  smudge(blob: Uint8Array): Uint8Array;
  clean(content: Uint8Array): Uint8Array;
  /** True when `git add` keeps this stored content's CRLF line ends as they are (text=auto and core.autocrlf leave committed CRLF alone). */
  keepsCrlf(blob: Uint8Array): boolean;
}

const IDENTITY: CheckoutConversion = { smudge: (b) => b, clean: (c) => c, keepsCrlf: () => true };

/**
 * The conversion git applies at `relPath` (relative to the working
 * directory `root`, '/'-separated): line endings from attributes and
 * `core.autocrlf` / `core.eol`. LFS paths are left as recorded (the
 * pointer). Not for symlinks, and not for raw disk copies (safety
 * checkpoints, captures), which are written as they are.
 */
export function checkoutConversion(root: string, relPath: string, env: GitEnvironment = process.env): CheckoutConversion {
  const repo = findGitRepository(root);
  const core = repo ? readCoreSettings(env, join(repo.commonDir, 'config')) : DEFAULT_CORE_SETTINGS;
  const { attrs, found } = attributesAt(repo, core, root, relPath, env);
  if (attrs.empty && core.autocrlf === 'false') return IDENTITY;
  // LFS content is git-lfs's business: the pointer is written back as recorded (without a driver, the content itself).
  if (found.filter === 'lfs') return IDENTITY;
  const action = crlfAction(found, core);
  const eolClass = cleanClass(action);
  const ident = found.ident === true;
  const encoding = workingTreeEncoding(found['working-tree-encoding']);
  if (eolClass === EOL_KEEP && !ident && !encoding) return IDENTITY;
  // Other filter drivers are not run either way: what was recorded is written (see docs/snapshot.md).
  return {
    smudge: (blob) => {
      let out = ident ? identToWorktree(blob) : blob;
      out = smudgeContent(out, action, core);
      return encoding ? encodeToWorktree(out, encoding) : out;
    },
    clean: (content) => {
      let out = encoding ? (encodeToGit(content, encoding) ?? content) : content;
      out = cleanContent(out, eolClass) ?? out;
      out = ident ? identToGit(out) : out;
      return out.length === content.length && Buffer.compare(Buffer.from(out), Buffer.from(content)) === 0 ? content : out;
    },
    keepsCrlf: (blob) => eolClass === EOL_AUTO && hasCrlfText(blob),
  };
}

/**
 * Which configured filter driver git runs on the files of the working
 * directory `root` and this server does not (see docs/snapshot.md):
 * `filter=<driver>` with `filter.<driver>.clean` or `.process` set, other
 * than LFS. The configuration is read once; the returned function takes a
 * path relative to `root` ('/'-separated) and gives the driver's name, or
 * undefined. Outside repositories, or with no such driver configured, it
 * reads nothing more.
 */
export function unrunFilters(root: string, env: GitEnvironment = process.env): (relPath: string) => string | undefined {
  const repo = findGitRepository(root);
  const drivers = repo ? readFilterDrivers(env, join(repo.commonDir, 'config')) : undefined;
  if (!repo || !drivers || [...drivers].every((d) => d === 'lfs')) return () => undefined;
  const core = readCoreSettings(env, join(repo.commonDir, 'config'));
  return (relPath) => {
    const { found } = attributesAt(repo, core, root, relPath, env);
    const filter = found.filter;
    return typeof filter === 'string' && filter !== 'lfs' && drivers.has(filter) ? filter : undefined;
  };
}

/** The attributes git gives `relPath` (relative to `root`), from every level of attribute files. */
function attributesAt(repo: GitRepositoryLocation | undefined, core: CoreSettings, root: string, relPath: string, env: GitEnvironment) {
  const top = repo?.workTree ?? root;
  const path = (repo ? pathInWorkTree(repo.workTree, root) : '') + relPath;
  const caseFold = core.ignoreCase;
  const first: AttributeLevel[] = [];
  const last: AttributeLevel[] = [];
  const info = repo ? readText(join(repo.commonDir, 'info', 'attributes')) : undefined;
  if (info !== undefined) first.push({ rules: parseAttributes(info, { macros: true, caseFold }), prepend: '', strip: 0 });
  const global = globalGitFiles(env, repo ? join(repo.commonDir, 'config') : undefined).attributesFile;
  const globalText = global ? readText(global) : undefined;
  if (globalText !== undefined) last.push({ rules: parseAttributes(globalText, { macros: true, caseFold }), prepend: '', strip: 0 });
  let attrs = AttributeStack.create(first, last);
  const names = path.split('/');
  for (let depth = 0, dir = ''; depth < names.length; dir += names[depth++] + '/') {
    const text = readText(join(top, dir, '.gitattributes'));
    if (text !== undefined) attrs = attrs.push({ rules: parseAttributes(text, { macros: depth === 0, caseFold }), prepend: '', strip: dir.length });
  }
  return { attrs, found: attrs.lookup(path, names[names.length - 1]!) };
}

/**
 * The bytes to write at `relPath` (relative to the working directory
 * `root`, '/'-separated) for a stored blob: LF → CRLF where git would check
 * the file out with CRLF, else the blob itself (see {@link checkoutConversion}).
 */
export function workingTreeContent(root: string, relPath: string, blob: Uint8Array, env: GitEnvironment = process.env): Uint8Array {
  return checkoutConversion(root, relPath, env).smudge(blob);
}
