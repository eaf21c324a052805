import { isAbsolute, relative, sep } from 'node:path';

/** `target` relative to `root`, `/`-separated, when it is `root` or inside it ('' for `root` itself); else undefined. */
export function relativeInside(root: string, target: string): string | undefined {
  const rel = relative(root, target);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return undefined;
  return toSlashes(rel);
}

/** True when `target` is `root` or lies inside it (compared as given; resolve symlinks first where they matter). */
export function isInsideDir(root: string, target: string): boolean {
  return relativeInside(root, target) !== undefined;
}

/** A platform path with `/` separators. */
export function toSlashes(p: string): string {
  return sep === '/' ? p : p.split(sep).join('/');
}
