/**
 * Git's config as `git add` reads it, enough to find `core.excludesFile`,
 * `core.attributesFile`, the core settings that change what is recorded
 * and the filter drivers: the system file (`GIT_CONFIG_SYSTEM`, none with
 * `GIT_CONFIG_NOSYSTEM`), the global files (`GIT_CONFIG_GLOBAL`, else
 * `$XDG_CONFIG_HOME/git/config` and `~/.gitconfig`), the repository's
 * `config`, then `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>`;
 * later values win. `[include]` and `[includeIf "gitdir:…"]`,
 * `"gitdir/i:…"` and `"onbranch:…"` are followed where they stand.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { compileGlob } from './wildmatch.js';

/** The environment variables git's config locations depend on. */
export interface GitEnvironment {
  /** The user's home directory (`$HOME`). */
  HOME?: string | undefined;
  /** `$XDG_CONFIG_HOME`; defaults to `$HOME/.config`. */
  XDG_CONFIG_HOME?: string | undefined;
  /** A file read instead of the global ones. */
  GIT_CONFIG_GLOBAL?: string | undefined;
  /** A file read instead of the system one. */
  GIT_CONFIG_SYSTEM?: string | undefined;
  /** True (`1`, `true`…): no system file. */
  GIT_CONFIG_NOSYSTEM?: string | undefined;
  /** How many `GIT_CONFIG_KEY_<n>` / `GIT_CONFIG_VALUE_<n>` pairs follow, read last. */
  GIT_CONFIG_COUNT?: string | undefined;
  [name: string]: string | undefined;
}

function readText(p: string): string | undefined {
  try {
    return readFileSync(p, 'utf8');
  } catch {
    return undefined;
  }
}

/** One `section.subsection.key = value` line; `value` null for a key written without `=`. */
interface ConfigEntry {
  /** Lowercase section, '.', subsection as written (if any), '.', lowercase key: `core.autocrlf`, `filter.lfs.clean`. */
  name: string;
  value: string | null;
}

/** Parses config text into entries in file order (include directives are entries like the others). */
function parseConfig(text: string): ConfigEntry[] {
  const out: ConfigEntry[] = [];
  let section = '';
  // Continuation lines: a backslash at the end of a line joins the next one.
  const lines = text.replace(/\\\r?\n/g, '').split('\n');
  for (const raw of lines) {
    let line = raw.trim();
    if (line.startsWith('[')) {
      const sub = /^\[\s*([A-Za-z0-9.-]+)\s+"((?:[^"\\]|\\.)*)"\s*\](.*)$/.exec(line);
      const plain = sub ? undefined : /^\[\s*([A-Za-z0-9.-]+)\s*\](.*)$/.exec(line);
      if (sub) {
        section = `${sub[1]!.toLowerCase()}.${sub[2]!.replace(/\\(.)/g, '$1')}`;
        line = sub[3]!.trim();
      } else if (plain) {
        // [section.sub] is the old spelling of [section "sub"] with the subsection lowercased.
        const name = plain[1]!.toLowerCase();
        section = name;
        line = plain[2]!.trim();
      } else {
        section = '';
        continue;
      }
      if (line === '') continue;
    }
    if (section === '' || line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const m = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (!m) continue;
    out.push({ name: `${section}.${m[1]!.toLowerCase()}`, value: m[2] === undefined ? null : unquote(m[2]) });
  }
  return out;
}

function unquote(v: string): string {
  let out = '';
  let quoted = false;
  for (let i = 0; i < v.length; i++) {
    const c = v[i]!;
    if (c === '"') quoted = !quoted;
    else if (c === '\\' && i + 1 < v.length) {
      const n = v[++i]!;
      out += n === 'n' ? '\n' : n === 't' ? '\t' : n === 'b' ? '\b' : n;
    } else if (!quoted && (c === '#' || c === ';')) break;
    else out += c;
  }
  return quoted ? out : out.trimEnd();
}

/** The repository a config is read for, for `includeIf` conditions. */
interface IncludeContext {
  env: GitEnvironment;
  /** The repository's git directory; conditions are false without one. */
  gitDir: string | undefined;
}

const MAX_INCLUDE_DEPTH = 10;

function expandPath(p: string, env: GitEnvironment, base: string | undefined): string | undefined {
  if (p.startsWith('~/')) return env.HOME ? join(env.HOME, p.slice(2)) : undefined;
  if (isAbsolute(p)) return p;
  return base ? resolve(base, p) : undefined;
}

function realDir(p: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    return p;
  }
}

/** git's `include_condition_is_true` for `gitdir:`, `gitdir/i:` and `onbranch:`; other conditions are false. */
function conditionHolds(cond: string, file: string | undefined, ctx: IncludeContext): boolean {
  const gitdir = /^gitdir(\/i)?:(.*)$/s.exec(cond);
  if (gitdir) {
    if (!ctx.gitDir) return false;
    let pattern = gitdir[2]!;
    if (pattern.startsWith('./')) {
      if (!file) return false;
      pattern = join(dirname(realDir(file)), pattern.slice(2));
    } else if (pattern.startsWith('~/')) {
      if (!ctx.env.HOME) return false;
      pattern = join(ctx.env.HOME, pattern.slice(2));
    } else if (!isAbsolute(pattern)) pattern = `**/${pattern}`;
    if (pattern.endsWith('/')) pattern += '**';
    const test = compileGlob(pattern, true, gitdir[1] !== undefined);
    const dir = ctx.gitDir.replace(/\/+$/, '');
    return test(dir) || test(realDir(dir));
  }
  const branch = /^onbranch:(.*)$/s.exec(cond);
  if (branch) {
    if (!ctx.gitDir) return false;
    const head = /^ref: refs\/heads\/(.+)$/m.exec(readText(join(ctx.gitDir, 'HEAD')) ?? '');
    if (!head) return false;
    let pattern = branch[1]!;
    if (pattern.endsWith('/')) pattern += '**';
    return compileGlob(pattern, true)(head[1]!.trim());
  }
  return false;
}

/** The entries of one config file with its includes expanded where they stand. */
function readConfigFile(path: string, ctx: IncludeContext, out: ConfigEntry[], depth = 0): void {
  const text = readText(path);
  if (text === undefined || depth > MAX_INCLUDE_DEPTH) return;
  for (const e of parseConfig(text)) {
    out.push(e);
    if (e.value === null || e.value === '') continue;
    const include = e.name === 'include.path';
    const conditional = !include && e.name.startsWith('includeif.') && e.name.endsWith('.path');
    if (!include && !conditional) continue;
    if (conditional && !conditionHolds(e.name.slice('includeif.'.length, -'.path'.length), path, ctx)) continue;
    const target = expandPath(e.value, ctx.env, dirname(path));
    if (target) readConfigFile(target, ctx, out, depth + 1);
  }
}

function envBool(v: string | undefined): boolean {
  return v !== undefined && configBool(v, false);
}

/** The system config file git reads by default here. */
function systemConfigPath(): string {
  if (process.platform === 'win32') return join(process.env.PROGRAMFILES ?? 'C:\\Program Files', 'Git', 'etc', 'gitconfig');
  return '/etc/gitconfig';
}

/**
 * Every config entry git reads for a repository whose config is at
 * `repoConfigPath` (none outside repositories), in the order git reads
 * them: later entries win.
 */
function readGitConfig(env: GitEnvironment, repoConfigPath?: string): ConfigEntry[] {
  const ctx: IncludeContext = { env, gitDir: repoConfigPath ? dirname(repoConfigPath) : undefined };
  const out: ConfigEntry[] = [];
  if (!envBool(env.GIT_CONFIG_NOSYSTEM)) readConfigFile(env.GIT_CONFIG_SYSTEM || systemConfigPath(), ctx, out);
  if (env.GIT_CONFIG_GLOBAL !== undefined) {
    if (env.GIT_CONFIG_GLOBAL !== '') readConfigFile(env.GIT_CONFIG_GLOBAL, ctx, out);
  } else {
    const xdg = env.XDG_CONFIG_HOME || (env.HOME ? join(env.HOME, '.config') : undefined);
    if (xdg) readConfigFile(join(xdg, 'git', 'config'), ctx, out);
    if (env.HOME) readConfigFile(join(env.HOME, '.gitconfig'), ctx, out);
  }
  if (repoConfigPath) readConfigFile(repoConfigPath, ctx, out);
  const count = Number(env.GIT_CONFIG_COUNT ?? 0);
  for (let i = 0; Number.isInteger(count) && i < count; i++) {
    const key = env[`GIT_CONFIG_KEY_${i}`];
    const value = env[`GIT_CONFIG_VALUE_${i}`];
    const dot = key?.indexOf('.') ?? -1;
    const last = key?.lastIndexOf('.') ?? -1;
    if (!key || dot <= 0 || last === key.length - 1) continue;
    // Section and key are case-insensitive, a subsection is not.
    const name = last === dot ? key.toLowerCase() : `${key.slice(0, dot).toLowerCase()}${key.slice(dot, last)}.${key.slice(last + 1).toLowerCase()}`;
    out.push({ name, value: value ?? '' });
  }
  return out;
}

/** The last value of each config variable, by name (see {@link ConfigEntry}). */
function configValues(entries: readonly ConfigEntry[]): Map<string, string | null> {
  const values = new Map<string, string | null>();
  for (const e of entries) values.set(e.name, e.value);
  return values;
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
 * Reads the core settings from every config source git reads for the
 * repository (later ones win), as `git add` sees them.
 */
export function readCoreSettings(env: GitEnvironment, repoConfigPath?: string): CoreSettings {
  return coreSettingsFrom(configValues(readGitConfig(env, repoConfigPath)));
}

/** The core settings in config values read by {@link readGitConfig}. */
function coreSettingsFrom(values: ReadonlyMap<string, string | null>): CoreSettings {
  const settings: CoreSettings = { ...DEFAULT_CORE_SETTINGS };
  const autocrlf = values.get('core.autocrlf');
  if (autocrlf !== undefined) settings.autocrlf = autocrlf?.toLowerCase() === 'input' ? 'input' : configBool(autocrlf, false) ? 'true' : 'false';
  const eol = values.get('core.eol');
  if (eol !== undefined) settings.eol = eol?.toLowerCase() === 'lf' ? 'lf' : eol?.toLowerCase() === 'crlf' ? 'crlf' : undefined;
  const fileMode = values.get('core.filemode');
  if (fileMode !== undefined) settings.fileMode = configBool(fileMode, settings.fileMode);
  const symlinks = values.get('core.symlinks');
  if (symlinks !== undefined) settings.symlinks = configBool(symlinks, settings.symlinks);
  const ignoreCase = values.get('core.ignorecase');
  if (ignoreCase !== undefined) settings.ignoreCase = configBool(ignoreCase, settings.ignoreCase);
  return settings;
}

/** Filter drivers with a clean side configured (`filter.<name>.clean` or `filter.<name>.process`): git runs them on `git add`. */
export function readFilterDrivers(env: GitEnvironment, repoConfigPath?: string): ReadonlySet<string> {
  const drivers = new Set<string>();
  for (const [name, value] of configValues(readGitConfig(env, repoConfigPath))) {
    const m = /^filter\.(.+)\.(clean|process)$/s.exec(name);
    if (m && value) drivers.add(m[1]!);
  }
  return drivers;
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
  const values = configValues(readGitConfig(env, repoConfigPath));
  const excludes = values.get('core.excludesfile');
  const attributes = values.get('core.attributesfile');
  const result: { excludesFile?: string; attributesFile?: string } = {};
  const ex = excludes != null && excludes !== '' ? expandHome(excludes, env) : xdg ? join(xdg, 'git', 'ignore') : undefined;
  const at = attributes != null && attributes !== '' ? expandHome(attributes, env) : xdg ? join(xdg, 'git', 'attributes') : undefined;
  if (ex) result.excludesFile = ex;
  if (at) result.attributesFile = at;
  return result;
}
