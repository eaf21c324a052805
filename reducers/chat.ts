/** Reducer for `ahp-chat:/<id>`: the turn lifecycle of one conversation. */

import { produce } from 'immer';
import type { Draft } from 'immer';
import { SessionStatus, SessionStatusActivityMask } from '../protocol/index.js';
import type { ChatAction, ChatState, ErrorInfo, ResponsePart, Turn, TurnState } from '../protocol/index.js';
import { stamp } from './types.js';
import type { ReduceOptions, UnknownAction } from './types.js';

/** Tool-call statuses that wait on the user, which makes the chat `InputNeeded`. */
const BLOCKING_TOOL_STATUSES = new Set(['pending-confirmation', 'pending-result-confirmation', 'auth-required']);

/** Tool-call statuses after which a tool call never changes again. */
const TERMINAL_TOOL_STATUSES = new Set(['completed', 'cancelled']);

/** The `toolCall` object of a tool-call part, which this server carries without a full type. */
function toolCallOf(part: ResponsePart): Record<string, unknown> | undefined {
  if (part.kind !== 'toolCall') return undefined;
  const toolCall = part['toolCall'];
  return typeof toolCall === 'object' && toolCall !== null ? (toolCall as Record<string, unknown>) : undefined;
}

/** Whether the active turn waits on the user (an open input request or a blocked tool call). */
function waitsOnUser(state: ChatState): boolean {
  return (
    state.activeTurn?.responseParts.some((part) => {
      if (part.kind === 'inputRequest') return part['response'] === undefined;
      const toolCall = toolCallOf(part);
      return toolCall !== undefined && BLOCKING_TOOL_STATUSES.has(String(toolCall['status']));
    }) ?? false
  );
}

/** Recomputes the activity bits of `status` from the chat's contents, keeping the flag bits. */
function summaryStatus(state: ChatState, terminal?: number): number {
  const activity = terminal ?? (waitsOnUser(state) ? SessionStatus.InputNeeded : state.activeTurn ? SessionStatus.InProgress : SessionStatus.Idle);
  return (state.status & ~SessionStatusActivityMask) | activity;
}

/** A non-terminal tool call forced to `cancelled` (reason `skipped`) because its turn ended. */
function skipToolCall(toolCall: Record<string, unknown>): Record<string, unknown> {
  const streaming = toolCall['status'] === 'streaming';
  const skipped: Record<string, unknown> = {
    status: 'cancelled',
    reason: 'skipped',
    invocationMessage: toolCall['invocationMessage'] ?? '',
  };
  for (const key of ['toolCallId', 'toolName', 'displayName', 'intention', 'contributor', '_meta']) {
    if (toolCall[key] !== undefined) skipped[key] = toolCall[key];
  }
  if (!streaming && toolCall['toolInput'] !== undefined) skipped['toolInput'] = toolCall['toolInput'];
  return skipped;
}

/** Moves the active turn `turnId` into `turns` with the given end state; other ids are a no-op. */
function endTurn(draft: Draft<ChatState>, turnId: string, turnState: TurnState, duration: number, options: ReduceOptions | undefined, error?: ErrorInfo): void {
  const active = draft.activeTurn;
  if (!active || active.id !== turnId) return;
  const responseParts = active.responseParts.map((part) => {
    const toolCall = toolCallOf(part as ResponsePart);
    if (!toolCall || TERMINAL_TOOL_STATUSES.has(String(toolCall['status']))) return part;
    return { ...part, toolCall: skipToolCall(toolCall) };
  });
  const turn: Turn = {
    id: active.id,
    startedAt: active.startedAt,
    // The duration is producer-supplied and opaque; a negative one would be nonsense to show.
    duration: Math.max(0, duration),
    message: active.message,
    responseParts: responseParts as ResponsePart[],
    usage: active.usage,
    state: turnState,
  };
  if (error) turn.error = error;
  draft.turns.push(turn);
  delete draft.activeTurn;
  draft.modifiedAt = stamp(options);
  draft.status = summaryStatus(draft as ChatState, turnState === 'error' ? SessionStatus.Error : undefined);
}

/** Appends text to the markdown or reasoning part `partId` of the active turn `turnId`. */
function appendText(draft: Draft<ChatState>, turnId: string, partId: string, kind: 'markdown' | 'reasoning', text: string): void {
  if (draft.activeTurn?.id !== turnId) return;
  const part = draft.activeTurn.responseParts.find((p) => p.kind === kind && p['id'] === partId);
  if (part && (part.kind === 'markdown' || part.kind === 'reasoning')) part.content += text;
}

/** Applies one chat action; unknown types and no-op actions return `state` itself. */
export function chatReducer(state: ChatState, action: ChatAction | UnknownAction, options?: ReduceOptions): ChatState {
  const known = action as ChatAction;
  return produce(state, (draft) => {
    switch (known.type) {
      case 'chat/turnStarted': {
        draft.activeTurn = {
          id: known.turnId,
          startedAt: known.startedAt,
          message: known.message,
          responseParts: [],
          usage: undefined,
        };
        draft.status = summaryStatus(draft as ChatState) & ~SessionStatus.IsRead;
        draft.modifiedAt = stamp(options);
        const consumed = known.queuedMessageId;
        if (consumed !== undefined) {
          if (draft.steeringMessage?.id === consumed) delete draft.steeringMessage;
          if (draft.queuedMessages) {
            const rest = draft.queuedMessages.filter((m) => m.id !== consumed);
            if (rest.length > 0) draft.queuedMessages = rest;
            else delete draft.queuedMessages;
          }
        }
        break;
      }

      case 'chat/responsePart':
        if (draft.activeTurn?.id === known.turnId) {
          draft.activeTurn.responseParts.push(known.part);
          draft.status = summaryStatus(draft as ChatState);
        }
        break;

      case 'chat/delta':
        appendText(draft, known.turnId, known.partId, 'markdown', known.content);
        break;

      case 'chat/reasoning':
        appendText(draft, known.turnId, known.partId, 'reasoning', known.content);
        break;

      case 'chat/usage':
        if (draft.activeTurn?.id === known.turnId) draft.activeTurn.usage = known.usage;
        break;

      case 'chat/turnComplete':
        endTurn(draft, known.turnId, 'complete', known.duration, options);
        break;

      case 'chat/turnCancelled':
        endTurn(draft, known.turnId, 'cancelled', known.duration, options);
        break;

      case 'chat/error':
        endTurn(draft, known.turnId, 'error', known.duration, options, known.error);
        break;

      case 'chat/truncated': {
        if (known.turnId == null) {
          draft.turns = [];
          delete draft.turnsNextCursor;
        } else {
          const index = draft.turns.findIndex((t) => t.id === known.turnId);
          if (index < 0) break;
          draft.turns.splice(index + 1);
        }
        delete draft.activeTurn;
        draft.modifiedAt = stamp(options);
        draft.status = summaryStatus(draft as ChatState);
        break;
      }

      case 'chat/turnsLoaded': {
        const present = new Set(draft.turns.map((t) => t.id));
        const older = known.turns.filter((t) => !present.has(t.id));
        if (older.length > 0) draft.turns.unshift(...older);
        if (known.turnsNextCursor != null) draft.turnsNextCursor = known.turnsNextCursor;
        else delete draft.turnsNextCursor;
        break;
      }

      case 'chat/activityChanged':
        if (known.activity != null) draft.activity = known.activity;
        else delete draft.activity;
        break;

      case 'chat/draftChanged':
        if (known.draft != null) draft.draft = known.draft;
        else delete draft.draft;
        break;
    }
  });
}
