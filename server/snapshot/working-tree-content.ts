/**
 * The way back out: what `git checkout` would write for a blob the
 * snapshot stored, so a file put back by an operation gets the line endings
 * its attributes and `core.autocrlf` / `core.eol` give it (the smudge side
 * of the conversion `walker.ts` applies on the way in).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fsPath } from '../path-bytes.js';
import { crlfAction, smudgeContent } from './eol-conversion.js';
import { AttributeStack, parseAttributes, type AttributeLevel } from './git-attributes.js';
import { DEFAULT_CORE_SETTINGS, globalGitFiles, readCoreSettings, type GitEnvironment } from './git-config.js';
import { findGitRepository, pathInWorkTree } from './git-repository.js';

function readText(path: string): string | undefined {
  try {
    return readFileSync(fsPath(path), 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The bytes to write at `relPath` (relative to the working directory
 * `root`, '/'-separated) for a stored blob: LF → CRLF where git would check
 * the file out with CRLF, else the blob itself. Not for symlinks, and not
 * for raw disk copies (safety checkpoints, captures), which are written as
 * they are.
 */
export function workingTreeContent(root: string, relPath: string, blob: Uint8Array, env: GitEnvironment = process.env): Uint8Array {
  if (blob.indexOf(10) < 0) return blob;
  const repo = findGitRepository(root);
  const core = repo ? readCoreSettings(env, join(repo.commonDir, 'config')) : DEFAULT_CORE_SETTINGS;
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
  if (attrs.empty && core.autocrlf === 'false') return blob;
  const found = attrs.lookup(path, names[names.length - 1]!);
  // LFS content is git-lfs's business: the pointer is written back as recorded.
  if (found.filter === 'lfs') return blob;
  return smudgeContent(blob, crlfAction(found, core), core);
}
