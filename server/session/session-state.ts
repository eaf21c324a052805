import { fileUri } from '../file-uri.js';
import type { TurnRecord } from './turn-record.js';
import { summaryMarkdown } from './turn-summary.js';
import { presentedPartsOf } from './presented-files.js';
import { SessionStatus, type ChatState, type ChatSummary, type SessionState, type SessionSummary } from '../../protocol/index.js';

/** What the initial channel states of a recording session are made from. */
export interface SessionStateInit {
  sessionUri: string;
  chatUri: string;
  title: string;
  workingDirectories: readonly string[];
  createdAt: string;
}

/** The provider id this server reports for its sessions. */
const PROVIDER_ID = 'changeset-server';

export function initialChatState(init: SessionStateInit): ChatState {
  return {
    resource: init.chatUri,
    title: init.title,
    status: SessionStatus.Idle,
    modifiedAt: init.createdAt,
    origin: { kind: 'user' },
    interactivity: 'read-only',
    turns: [],
  };
}

/** A chat state listing turns read back from the stores; an unfinished one becomes the active turn. */
export function restoredChatState(chat: ChatState, turns: readonly TurnRecord[]): ChatState {
  const message = (t: TurnRecord) => ({ text: t.message ?? '', origin: { kind: 'user' as const } });
  const done = turns.filter((t) => t.after);
  const next: ChatState = {
    ...chat,
    turns: done.map((t) => ({
      id: t.id,
      startedAt: t.startedAt,
      duration: t.durationMs ?? 0,
      message: message(t),
      responseParts: [...presentedPartsOf(t), ...(t.summary ? [{ kind: 'markdown' as const, id: 'changes', content: summaryMarkdown(t.summary) }] : [])],
      usage: undefined,
      state: t.state ?? 'complete',
      ...(t.state === 'error' ? { error: { errorType: 'TurnError', message: t.error ?? 'The turn ended with an error' } } : {}),
    })),
  };
  const active = turns.find((t) => !t.after);
  if (active) next.activeTurn = { id: active.id, startedAt: active.startedAt, message: message(active), responseParts: [], usage: undefined };
  return next;
}

export function chatSummaryOf(chat: ChatState): ChatSummary {
  const summary: ChatSummary = {
    resource: chat.resource,
    title: chat.title,
    status: chat.status,
    modifiedAt: chat.modifiedAt,
  };
  if (chat.origin) summary.origin = chat.origin;
  if (chat.interactivity) summary.interactivity = chat.interactivity;
  if (chat.activity) summary.activity = chat.activity;
  return summary;
}

export function initialSessionState(init: SessionStateInit): SessionState {
  const chat = initialChatState(init);
  const state: SessionState = {
    provider: PROVIDER_ID,
    title: init.title,
    status: SessionStatus.Idle,
    workingDirectory: fileUri(init.workingDirectories[0]!),
    lifecycle: 'creating',
    activeClients: [],
    chats: [chatSummaryOf(chat)],
    defaultChat: init.chatUri,
    changesets: [],
  };
  if (init.workingDirectories.length > 1) {
    state._meta = { workingDirectories: init.workingDirectories.map(fileUri) };
  }
  return state;
}

/** The root catalogue entry of a session, from its current state. */
export function sessionSummaryOf(uri: string, state: SessionState, createdAt: string, modifiedAt: string): SessionSummary {
  const summary: SessionSummary = {
    resource: uri,
    provider: state.provider,
    title: state.title,
    status: state.status,
    createdAt,
    modifiedAt,
  };
  if (state.workingDirectory) summary.workingDirectory = state.workingDirectory;
  if (state.activity) summary.activity = state.activity;
  if (state._meta) summary._meta = state._meta;
  return summary;
}
