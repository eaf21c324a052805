/**
 * Exclude patterns applied to workspaces that are not git repositories, in
 * `.gitignore` syntax, with the lowest precedence (a workspace `.gitignore`
 * can re-include with `!`). Dependency and build output, caches, secrets and
 * archives: things a user would not want recorded turn by turn.
 */
export const BUILTIN_EXCLUDES: readonly string[] = [
  // dependencies
  'node_modules/',
  'bower_components/',
  'jspm_packages/',
  '.venv/',
  'venv/',
  '.tox/',
  '.nox/',
  // build output
  'dist/',
  'build/',
  'out/',
  'target/',
  '.next/',
  '.nuxt/',
  '.svelte-kit/',
  '.output/',
  '__pycache__/',
  '*.pyc',
  '*.class',
  '*.o',
  // caches
  '.cache/',
  '.gradle/',
  '.parcel-cache/',
  '.turbo/',
  '.mypy_cache/',
  '.pytest_cache/',
  '.ruff_cache/',
  '.terraform/',
  'coverage/',
  '.nyc_output/',
  // editor and OS litter
  '.DS_Store',
  'Thumbs.db',
  // secrets
  '.env',
  '.env.*',
  // archives and disk images
  '*.zip',
  '*.tar',
  '*.tar.gz',
  '*.tgz',
  '*.tar.bz2',
  '*.tar.xz',
  '*.7z',
  '*.rar',
  '*.jar',
  '*.iso',
  '*.dmg',
];

/** Default size limit for files in workspaces that are not repositories (bytes). */
export const DEFAULT_NON_REPO_MAX_FILE_BYTES = 50 * 1024 * 1024;
