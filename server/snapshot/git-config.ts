/**
 * Just enough of git's config format to find `core.excludesFile`,
 * `core.attributesFile` and the core settings that change what `git add`
 * records, and the default locations git falls back to.
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
  const value = coreEntries(text).get(key);
  return value === null ? '' : value;
}

/** Every `core.*` variable in config text by lowercase key, the last one winning; `null` for a key written without `=`. */
function coreEntries(text: string): Map<string, string | null> {
  let section = '';
  const values = new Map<string, string | null>();
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
    if (!m) continue;
    values.set(m[1]!.toLowerCase(), m[2] === undefined ? null : unquote(m[2]));
  }
  return values;
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

/** The `core.*` settings that change what `git add` records. */
export interface CoreSettings {
  /** `core.autocrlf`: `true` (CRLF in the working tree), `input` (LF), `false` (no conversion without attributes). */
  autocrlf: 'true' | 'input' | 'false';
  /** `core.eol`: line ending `text` files get in the working tree; undefined for unset or `native` (LF here). */
  eol: 'lf' | 'crlf' | undefined;
  /** `core.fileMode`: false when the executable bit on disk is not to be trusted. */
  fileMode: boolean;
  /** `core.symlinks`: false when symlinks are checked out as plain files holding the link text. */
  symlinks: boolean;
  /** `core.ignoreCase`: ignore and attribute patterns match regardless of ASCII case. */
  ignoreCase: boolean;
}

/** Git's defaults, used outside repositories and for unset values. */
export const DEFAULT_CORE_SETTINGS: Readonly<CoreSettings> = { autocrlf: 'false', eol: undefined, fileMode: true, symlinks: true, ignoreCase: false };

/** git_config_bool: a key without `=` is true; yes/on/true/1 and no/off/false/0/empty. */
function configBool(value: string | null, fallback: boolean): boolean {
  if (value === null) return true;
  const v = value.toLowerCase();
  if (v === 'true' || v === 'yes' || v === 'on') return true;
  if (v === 'false' || v === 'no' || v === 'off' || v === '') return false;
  const n = Number(v);
  return Number.isInteger(n) ? n !== 0 : fallback;
}

/**
 * Reads the core settings from the global config files and the repository
 * config (later files win), as `git add` sees them.
 */
export function readCoreSettings(env: GitEnvironment, repoConfigPath?: string): CoreSettings {
  const settings: CoreSettings = { ...DEFAULT_CORE_SETTINGS };
  for (const c of configFiles(env, repoConfigPath)) {
    const text = readText(c);
    if (text === undefined) continue;
    const core = coreEntries(text);
    const autocrlf = core.get('autocrlf');
    if (autocrlf !== undefined) settings.autocrlf = autocrlf?.toLowerCase() === 'input' ? 'input' : configBool(autocrlf, false) ? 'true' : 'false';
    const eol = core.get('eol');
    if (eol !== undefined) settings.eol = eol?.toLowerCase() === 'lf' ? 'lf' : eol?.toLowerCase() === 'crlf' ? 'crlf' : undefined;
    const fileMode = core.get('filemode');
    if (fileMode !== undefined) settings.fileMode = configBool(fileMode, settings.fileMode);
    const symlinks = core.get('symlinks');
    if (symlinks !== undefined) settings.symlinks = configBool(symlinks, settings.symlinks);
    const ignoreCase = core.get('ignorecase');
    if (ignoreCase !== undefined) settings.ignoreCase = configBool(ignoreCase, settings.ignoreCase);
  }
  return settings;
}

function configFiles(env: GitEnvironment, repoConfigPath?: string): string[] {
  const xdg = env.XDG_CONFIG_HOME || (env.HOME ? join(env.HOME, '.config') : undefined);
  const configs: string[] = [];
  if (xdg) configs.push(join(xdg, 'git', 'config'));
  if (env.HOME) configs.push(join(env.HOME, '.gitconfig'));
  if (repoConfigPath) configs.push(repoConfigPath);
  return configs;
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
  const configs = configFiles(env, repoConfigPath);
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
