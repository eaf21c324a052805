import { describe, expect, it } from 'vitest';
import { formatMirrorStatus } from '../../server/mirror/mirror-status-text.js';

describe('changeset-server status: the mirror', () => {
  it('names what is not pushed yet, the last success, the last error and the next attempt', () => {
    const text = formatMirrorStatus({
      url: 'https://git.example.com/me/project.git',
      workspaces: [
        {
          dir: '/work/app',
          remoteRefs: 'refs/changeset-server/mirror/app-0123456789abcdef/',
          pushing: false,
          pendingSessions: [{ session: '01J0SESSION', refs: 4 }],
          pendingRefs: 4,
          lastSuccessAt: '2024-05-01T10:00:00.000Z',
          lastError: 'connect ECONNREFUSED 127.0.0.1:443',
          lastErrorAt: '2024-05-01T10:05:00.000Z',
          nextRetryAt: '2024-05-01T10:05:08.000Z',
          failures: 3,
        },
      ],
    });
    expect(text).toBe(
      [
        '',
        'mirror: https://git.example.com/me/project.git',
        '  /work/app: 4 refs of 1 session not pushed yet; last pushed 2024-05-01T10:00:00.000Z',
        '    pending: 01J0SESSION (4 refs)',
        '    last error (2024-05-01T10:05:00.000Z, 3 in a row): connect ECONNREFUSED 127.0.0.1:443',
        '    next attempt: 2024-05-01T10:05:08.000Z',
        '',
      ].join('\n'),
    );
  });
});
