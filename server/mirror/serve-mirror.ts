/** What `serve` needs to mirror: the setting, read once, and the service wiring. */
import type { SessionManager } from '../session/session-manager.js';
import type { MirrorService } from './mirror-service.js';
import { MIRROR_ENV, mirrorRemote, type MirrorRemote } from './mirror-remote.js';

export { MirrorSettingsError } from './mirror-remote.js';

/** The mirror `--mirror` (else `$CHANGESET_SERVER_MIRROR`) names, or undefined; throws `MirrorSettingsError` for a bad one. */
export function mirrorSetting(flag: string | undefined, env: NodeJS.ProcessEnv): MirrorRemote | undefined {
  const url = flag ?? (env[MIRROR_ENV] || undefined);
  return url === undefined ? undefined : mirrorRemote(url, env);
}

/** What mirroring needs of the service: its sessions and where their stores live. */
export interface MirroredService {
  readonly sessions: SessionManager;
  readonly stateDir: string;
}

/**
 * Mirrors every session of the service from now on; `service.ts` serves its
 * `mirror/status`. The mirror's modules (isomorphic-git among them) load
 * only here, so a `serve` without a mirror never pays for them.
 */
export async function startMirror(service: MirroredService, remote: MirrorRemote, log: (line: string) => void): Promise<MirrorService> {
  const { MirrorService } = await import('./mirror-service.js');
  return new MirrorService(service.sessions, { remote, stateDir: service.stateDir, log });
}
