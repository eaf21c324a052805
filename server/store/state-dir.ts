/**
 * Where stores live: `<stateDir>/workspaces/<id>/` with `<id>` a stable hash
 * of the workspace's real path, holding `shadow.git` and `workspace.json`.
 */
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/**
 * The default state directory: `$XDG_STATE_HOME/changeset-server` when that
 * variable holds an absolute path, else `~/.local/state/changeset-server`.
 */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env['XDG_STATE_HOME'];
  if (xdg && isAbsolute(xdg)) return join(xdg, 'changeset-server');
  return join(homedir(), '.local', 'state', 'changeset-server');
}

/** The stable store id for a workspace: 16 hex characters of SHA-256 over its real path. */
function workspaceId(realWorkspacePath: string): string {
  return createHash('sha256').update(realWorkspacePath, 'utf8').digest('hex').slice(0, 16);
}

/** Paths of one workspace's store. */
export interface WorkspaceLayout {
  /** `<stateDir>/workspaces/<id>`. */
  root: string;
  /** The shadow bare repository. */
  shadowDir: string;
  /** JSON file recording which workspace this store belongs to. */
  workspaceJson: string;
}

/** The layout of the store for a workspace whose real path is given. */
export function workspaceLayout(stateDir: string, realWorkspacePath: string): WorkspaceLayout {
  const root = join(stateDir, 'workspaces', workspaceId(realWorkspacePath));
  return { root, shadowDir: join(root, 'shadow.git'), workspaceJson: join(root, 'workspace.json') };
}
