import { describe, expect, it } from 'vitest';
import type { ChangesetState, ChatState, RootState, SessionState } from '../../protocol/index.js';
import { SessionStatus } from '../../protocol/index.js';
import { changesetReducer, chatReducer, reduce, rootReducer, sessionReducer } from '../../reducers/index.js';

const root: RootState = { agents: [] };
const session: SessionState = {
  provider: 'claude-code',
  title: 'S',
  status: SessionStatus.Idle,
  lifecycle: 'ready',
  activeClients: [],
  chats: [],
};
const chat: ChatState = {
  resource: 'ahp-chat:/c1',
  title: 'C',
  status: SessionStatus.Idle | SessionStatus.IsRead,
  modifiedAt: '2024-01-01T00:00:00.000Z',
  turns: [],
};
const changeset: ChangesetState = {
  status: 'ready',
  files: [
    { id: 'file:///w/a.ts', edit: { after: { uri: 'file:///w/a.ts', content: 'ahp-content:/a' } } },
    { id: 'file:///w/b.ts', edit: { before: { uri: 'file:///w/b.ts', content: 'ahp-content:/b' } }, reviewed: true },
  ],
};

describe('reduce()', () => {
  it('returns the identical state object for unknown action types on every channel', () => {
    const unknown = { type: 'future/somethingNew', payload: 1 };
    expect(reduce('root', root, unknown)).toBe(root);
    expect(reduce('session', session, unknown)).toBe(session);
    expect(reduce('chat', chat, unknown)).toBe(chat);
    expect(reduce('changeset', changeset, unknown)).toBe(changeset);
  });

  it('ignores actions that belong to another channel kind', () => {
    expect(reduce('session', session, { type: 'changeset/cleared' })).toBe(session);
    expect(reduce('changeset', changeset, { type: 'session/ready' })).toBe(changeset);
  });

  it('returns the identical object for actions that change nothing', () => {
    expect(changesetReducer(changeset, { type: 'changeset/filesReviewChanged', files: ['nope'], reviewed: true })).toBe(changeset);
    expect(changesetReducer(changeset, { type: 'changeset/filesReviewChanged', files: ['file:///w/b.ts'], reviewed: true })).toBe(changeset);
    expect(changesetReducer({ status: 'ready', files: [] }, { type: 'changeset/cleared' }).files).toEqual([]);
    expect(sessionReducer(session, { type: 'session/chatRemoved', chat: 'ahp-chat:/none' })).toBe(session);
    expect(chatReducer(chat, { type: 'chat/turnComplete', turnId: 'not-active', duration: 5 })).toBe(chat);
  });

  it('never mutates its input', () => {
    const before = JSON.stringify(changeset);
    const next = changesetReducer(changeset, {
      type: 'changeset/filesReviewChanged',
      files: ['file:///w/a.ts', 'file:///w/b.ts'],
      reviewed: false,
    });
    expect(JSON.stringify(changeset)).toBe(before);
    expect(next.files.map((f) => f.reviewed)).toEqual([false, false]);
    // Untouched parts are shared, not copied.
    expect(next.files[0]?.edit).toBe(changeset.files[0]?.edit);
  });

  it('leaves edit and _meta alone when review changes', () => {
    const withMeta: ChangesetState = {
      status: 'ready',
      files: [{ id: 'x', edit: { after: { uri: 'file:///x', content: 'c:/x' } }, _meta: { displayPath: 'x' } }],
    };
    const next = changesetReducer(withMeta, { type: 'changeset/filesReviewChanged', files: ['x'], reviewed: true });
    expect(next.files[0]).toEqual({ ...withMeta.files[0], reviewed: true });
  });

  it('drops a stale error when an operation recovers and ignores unknown operations', () => {
    const s: ChangesetState = {
      status: 'ready',
      files: [],
      operations: [{ id: 'revert', label: 'Revert', scopes: ['changeset'], status: 'running' }],
    };
    const failed = changesetReducer(s, {
      type: 'changeset/operationStatusChanged',
      operationId: 'revert',
      status: 'error',
      error: { errorType: 'conflict', message: 'a.ts changed' },
    });
    expect(failed.operations?.[0]?.error?.errorType).toBe('conflict');
    const idle = changesetReducer(failed, { type: 'changeset/operationStatusChanged', operationId: 'revert', status: 'idle' });
    expect(idle.operations?.[0]).toEqual({ id: 'revert', label: 'Revert', scopes: ['changeset'], status: 'idle' });
    expect(changesetReducer(s, { type: 'changeset/operationStatusChanged', operationId: 'x', status: 'idle' })).toBe(s);
  });

  it('runs a turn from start to completion and keeps the flag bits', () => {
    const now = () => Date.parse('2024-01-01T00:00:05.000Z');
    const started = chatReducer(
      chat,
      {
        type: 'chat/turnStarted',
        turnId: 't1',
        startedAt: '2024-01-01T00:00:01.000Z',
        message: { text: 'fix it', origin: { kind: 'user' } },
      },
      { now },
    );
    expect(started.activeTurn?.id).toBe('t1');
    // Starting a turn clears IsRead and sets InProgress.
    expect(started.status).toBe(SessionStatus.InProgress);
    const withText = chatReducer(chatReducer(started, { type: 'chat/responsePart', turnId: 't1', part: { kind: 'markdown', id: 'p', content: 'Do' } }), {
      type: 'chat/delta',
      turnId: 't1',
      partId: 'p',
      content: 'ne',
    });
    const archived = { ...withText, status: withText.status | SessionStatus.IsArchived };
    const done = chatReducer(archived, { type: 'chat/error', turnId: 't1', duration: 4000, error: { errorType: 'x', message: 'y' } }, { now });
    expect(done.activeTurn).toBeUndefined();
    expect(done.turns).toHaveLength(1);
    expect(done.turns[0]).toMatchObject({ id: 't1', state: 'error', duration: 4000, responseParts: [{ kind: 'markdown', content: 'Done' }] });
    expect(done.status).toBe(SessionStatus.Error | SessionStatus.IsArchived);
    expect(done.modifiedAt).toBe('2024-01-01T00:00:05.000Z');
  });

  it('keeps the root and session reducers total over their actions', () => {
    expect(rootReducer(root, { type: 'root/activeSessionsChanged', activeSessions: 2 }).activeSessions).toBe(2);
    const read = sessionReducer(session, { type: 'session/isReadChanged', isRead: true });
    expect(read.status).toBe(SessionStatus.Idle | SessionStatus.IsRead);
    expect(sessionReducer(read, { type: 'session/isReadChanged', isRead: false }).status).toBe(SessionStatus.Idle);
    const updated = sessionReducer(
      { ...session, chats: [{ resource: 'ahp-chat:/c1', title: 'a', status: 1, modifiedAt: 'm' }] },
      { type: 'session/chatUpdated', chat: 'ahp-chat:/c1', changes: { resource: 'ahp-chat:/other', title: 'b' } },
    );
    expect(updated.chats[0]).toEqual({ resource: 'ahp-chat:/c1', title: 'b', status: 1, modifiedAt: 'm' });
  });
});
