/** Chat channel actions (`chat/*`) this server emits or reduces. */

import type { ErrorInfo, Meta } from '../common/state.js';
import type { Message, ResponsePart, Turn, UsageInfo } from './state.js';

/** A message was sent and a new turn starts. */
export interface ChatTurnStartedAction {
  /** Discriminant. */
  type: 'chat/turnStarted';
  /** New turn id. */
  turnId: string;
  /** ISO 8601 time the turn started. */
  startedAt: string;
  /** The message that starts the turn. */
  message: Message;
  /** Id of the queued or steering message this turn consumed, if any. */
  queuedMessageId?: string;
  /** Producer metadata. */
  _meta?: Meta;
}

/** A new response part was appended to the active turn. */
export interface ChatResponsePartAction {
  /** Discriminant. */
  type: 'chat/responsePart';
  /** Turn id; ignored unless it is the active turn. */
  turnId: string;
  /** The new part. */
  part: ResponsePart;
  /** Producer metadata. */
  _meta?: Meta;
}

/** Text appended to a markdown part of the active turn. */
export interface ChatDeltaAction {
  /** Discriminant. */
  type: 'chat/delta';
  /** Turn id; ignored unless it is the active turn. */
  turnId: string;
  /** Id of the markdown part to append to. */
  partId: string;
  /** Text chunk. */
  content: string;
  /** Producer metadata. */
  _meta?: Meta;
}

/** Text appended to a reasoning part of the active turn. */
export interface ChatReasoningAction {
  /** Discriminant. */
  type: 'chat/reasoning';
  /** Turn id; ignored unless it is the active turn. */
  turnId: string;
  /** Id of the reasoning part to append to. */
  partId: string;
  /** Text chunk. */
  content: string;
  /** Producer metadata. */
  _meta?: Meta;
}

/** Token usage reported for the active turn. */
export interface ChatUsageAction {
  /** Discriminant. */
  type: 'chat/usage';
  /** Turn id; ignored unless it is the active turn. */
  turnId: string;
  /** Token usage data. */
  usage: UsageInfo;
  /** Producer metadata. */
  _meta?: Meta;
}

/** Fields shared by the three actions that end a turn. */
interface TurnEndFields {
  /** Id of the active turn being ended; other ids are a no-op. */
  turnId: string;
  /** Producer-measured duration in milliseconds; negative values are clamped to zero. */
  duration: number;
  /** Producer metadata. */
  _meta?: Meta;
}

/** The turn finished normally. */
export interface ChatTurnCompleteAction extends TurnEndFields {
  /** Discriminant. */
  type: 'chat/turnComplete';
}

/** The turn was aborted. */
export interface ChatTurnCancelledAction extends TurnEndFields {
  /** Discriminant. */
  type: 'chat/turnCancelled';
}

/** The turn ended with an error. */
export interface ChatErrorAction extends TurnEndFields {
  /** Discriminant. */
  type: 'chat/error';
  /** What went wrong. */
  error: ErrorInfo;
}

/** Turn history truncated: keep turns up to `turnId`, or all cleared when omitted; drops the active turn. */
export interface ChatTruncatedAction {
  /** Discriminant. */
  type: 'chat/truncated';
  /** Keep turns up to and including this one; omit to clear all. Unknown ids are a no-op. */
  turnId?: string;
}

/** Older turns were loaded in front of the current window. */
export interface ChatTurnsLoadedAction {
  /** Discriminant. */
  type: 'chat/turnsLoaded';
  /** Older turns, oldest first; ids already present are skipped. */
  turns: Turn[];
  /** Cursor for the next older page; omit when everything is loaded. */
  turnsNextCursor?: string;
}

/** The chat's activity description changed. */
export interface ChatActivityChangedAction {
  /** Discriminant. */
  type: 'chat/activityChanged';
  /** What the chat is doing; omit to clear. */
  activity?: string;
}

/** The chat's draft input changed. */
export interface ChatDraftChangedAction {
  /** Discriminant. */
  type: 'chat/draftChanged';
  /** New draft; omit to clear. */
  draft?: Message;
}

/** Every action the chat reducer handles. */
export type ChatAction =
  | ChatTurnStartedAction
  | ChatResponsePartAction
  | ChatDeltaAction
  | ChatReasoningAction
  | ChatUsageAction
  | ChatTurnCompleteAction
  | ChatTurnCancelledAction
  | ChatErrorAction
  | ChatTruncatedAction
  | ChatTurnsLoadedAction
  | ChatActivityChangedAction
  | ChatDraftChangedAction;

/** The `type` of every chat action. */
export type ChatActionType = ChatAction['type'];
