/**
 * Just enough of git's config format to find `core.excludesFile` and
 * `core.attributesFile`, and the default locations git falls back to.
 * `include` directives and conditional includes are not followed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The environment variables the global git locations depend on. */
export interface GitEnvironment {
  /** The user's home directory (`$HOME`). */
  HOME?: string | undefined;
  /** `$XDG_CONFIG_HOME`; defaults to `$HOME/.config`. */
  XDG_CONFIG_HOME?: string | undefined;
}

function readText(p: string): string | undefined {
  try {
    return readFileSync(p, 'utf8');
  } catch {
    return undefined;
  }
}

/** Reads `core.<key>` values (lowercase key) from config text; the last one wins. */
export function readCoreValue(text: string, key: string): string | undefined {
  let section = '';
  let value: string | undefined;
  for (const raw of text.split('\n')) {
    let line = raw.trim();
    const sec = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]\s*(.*)$/.exec(line);
    if (sec) {
      section = sec[1]!.toLowerCase();
      line = sec[2]!.trim();
      if (line === '') continue;
    }
    if (section !== 'core' || line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const m = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (!m || m[1]!.toLowerCase() !== key) continue;
    value = unquote(m[2] ?? '');
  }
  return value;
}

function unquote(v: string): string {
  let out = '';
  let quoted = false;
  for (let i = 0; i < v.length; i++) {
    const c = v[i]!;
    if (c === '"') quoted = !quoted;
    else if (c === '\\' && i + 1 < v.length) {
      const n = v[++i]!;
      out += n === 'n' ? '\n' : n === 't' ? '\t' : n;
    } else if (!quoted && (c === '#' || c === ';')) break;
    else out += c;
  }
  return quoted ? out : out.trimEnd();
}

function expandHome(p: string, env: GitEnvironment): string {
  if (p.startsWith('~/') && env.HOME) return join(env.HOME, p.slice(2));
  return p;
}

/**
 * Resolves the global excludes file and global attributes file the way git
 * does: `core.excludesFile` / `core.attributesFile` from the repository
 * config, `~/.gitconfig` or `$XDG_CONFIG_HOME/git/config`, else
 * `$XDG_CONFIG_HOME/git/ignore` / `attributes` (`~/.config/git/...`).
 */
export function globalGitFiles(env: GitEnvironment, repoConfigPath?: string): { excludesFile?: string; attributesFile?: string } {
  const xdg = env.XDG_CONFIG_HOME || (env.HOME ? join(env.HOME, '.config') : undefined);
  const configs: string[] = [];
  if (xdg) configs.push(join(xdg, 'git', 'config'));
  if (env.HOME) configs.push(join(env.HOME, '.gitconfig'));
  if (repoConfigPath) configs.push(repoConfigPath);
  let excludes: string | undefined;
  let attributes: string | undefined;
  for (const c of configs) {
    const text = readText(c);
    if (text === undefined) continue;
    excludes = readCoreValue(text, 'excludesfile') ?? excludes;
    attributes = readCoreValue(text, 'attributesfile') ?? attributes;
  }
  const result: { excludesFile?: string; attributesFile?: string } = {};
  const ex = excludes !== undefined ? expandHome(excludes, env) : xdg ? join(xdg, 'git', 'ignore') : undefined;
  const at = attributes !== undefined ? expandHome(attributes, env) : xdg ? join(xdg, 'git', 'attributes') : undefined;
  if (ex) result.excludesFile = ex;
  if (at) result.attributesFile = at;
  return result;
}
