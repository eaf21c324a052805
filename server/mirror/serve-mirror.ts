/** What `serve` needs to mirror: the setting, read once, and the service wiring. */
import type { ChangesetService } from '../service.js';
import { MirrorService } from './mirror-service.js';
import { MIRROR_ENV, mirrorRemote, type MirrorRemote } from './mirror-remote.js';

export { MirrorSettingsError } from './mirror-remote.js';

/** The mirror `--mirror` (else `$CHANGESET_SERVER_MIRROR`) names, or undefined; throws `MirrorSettingsError` for a bad one. */
export function mirrorSetting(flag: string | undefined, env: NodeJS.ProcessEnv): MirrorRemote | undefined {
  const url = flag ?? (env[MIRROR_ENV] || undefined);
  return url === undefined ? undefined : mirrorRemote(url, env);
}

/** Mirrors every session of the service from now on and serves `mirror/status`. */
export function startMirror(service: ChangesetService, remote: MirrorRemote, log: (line: string) => void): MirrorService {
  const mirror = new MirrorService(service.sessions, { remote, stateDir: service.stateDir, log });
  mirror.register(service.server);
  return mirror;
}
