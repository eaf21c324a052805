/** How `changeset-server status` asks for, and shows, what the mirror has not pushed yet. */
import type { MirrorStatus, MirrorStatusParams } from '../../protocol/index.js';

/** Anything that sends the `mirror/status` request (the CLI's client). */
export interface StatusRequester {
  request(method: 'mirror/status', params: MirrorStatusParams): Promise<MirrorStatus>;
}

/** The server's mirror status, or undefined when it mirrors nowhere (the method is not served). */
export async function requestMirrorStatus(client: StatusRequester): Promise<MirrorStatus | undefined> {
  try {
    return await client.request('mirror/status', {});
  } catch {
    return undefined;
  }
}

/** Lines for people: where to, what is pending, how the last attempt went. */
export function formatMirrorStatus(status: MirrorStatus): string {
  const lines = ['', `mirror: ${status.url}`];
  for (const w of status.workspaces) {
    const state = w.pushing
      ? 'pushing'
      : w.pendingRefs === 0
        ? 'up to date'
        : `${w.pendingRefs} ref${w.pendingRefs === 1 ? '' : 's'} of ${w.pendingSessions.length} session${w.pendingSessions.length === 1 ? '' : 's'} not pushed yet`;
    lines.push(`  ${w.dir}: ${state}${w.lastSuccessAt ? `; last pushed ${w.lastSuccessAt}` : ''}`);
    for (const s of w.pendingSessions.slice(0, 10)) lines.push(`    pending: ${s.session} (${s.refs} ref${s.refs === 1 ? '' : 's'})`);
    if (w.lastError !== undefined) {
      lines.push(`    last error (${w.lastErrorAt}, ${w.failures} in a row): ${w.lastError}`);
      if (w.nextRetryAt) lines.push(`    next attempt: ${w.nextRetryAt}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
