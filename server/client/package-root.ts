import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The installed package's root directory (where its package.json is), found by walking up from this module. */
export function packageRoot(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string };
      if (pkg.name === 'changeset-server') return dir;
    } catch {
      // keep walking up
    }
    dir = dirname(dir);
  }
  return undefined;
}

/** The built web viewer: `dist/viewer` in the package. */
export function defaultViewerDir(): string | undefined {
  const root = packageRoot();
  return root ? join(root, 'dist', 'viewer') : undefined;
}

/** The command that runs this CLI: node and the package's `bin/changeset-server.js`. */
export function cliCommand(): { node: string; script: string } | undefined {
  const root = packageRoot();
  return root ? { node: process.execPath, script: join(root, 'bin', 'changeset-server.js') } : undefined;
}

/** The installed package's version, from its package.json. */
export function packageVersion(): string | undefined {
  const root = packageRoot();
  if (!root) return undefined;
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: string }).version;
}
