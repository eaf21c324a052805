/** Chat channel state (`ahp-chat:/<id>`): the turn list of one conversation. */

import type { ContentRef, ErrorInfo, JsonObject, Meta, TextRange, URI } from '../common/state.js';
import type { SessionStatus } from '../session/state.js';

/** How a completed turn ended. */
export const TurnState = {
  /** The turn finished normally. */
  Complete: 'complete',
  /** The turn was aborted. */
  Cancelled: 'cancelled',
  /** The turn ended with an error. */
  Error: 'error',
} as const;
/** One of the {@link TurnState} values. */
export type TurnState = (typeof TurnState)[keyof typeof TurnState];

/** Who produced a message. */
export type MessageKind = 'user' | 'agent' | 'tool' | 'systemNotification';

/** Identifies who produced a {@link Message}. */
export interface MessageOrigin {
  /** The kind of actor that produced the message. */
  kind: MessageKind;
}

/** A model selection recorded on a message. */
export interface ModelSelection {
  /** Model identifier. */
  id: string;
  /** Model-specific configuration values keyed by the model's config schema. */
  config?: { [key: string]: string | number | boolean | null };
}

/** A custom agent selection recorded on a message. */
export interface AgentSelection {
  /** Stable custom-agent URI. */
  uri: URI;
}

/** An attachment on a message; we carry attachments without interpreting them beyond these fields. */
export interface MessageAttachment {
  /** Variant discriminant: `simple`, `embeddedResource`, `resource` or `annotations`. */
  type: string;
  /** Human-readable label, e.g. a file name. */
  label: string;
  /** Range in the message text that references this attachment. */
  range?: TextRange;
  /** Display hint such as `document` or `selection`. */
  displayKind?: string;
  /** Producer metadata; clients must preserve it when echoing the attachment. */
  _meta?: Meta;
  /** Variant-specific fields. */
  [key: string]: unknown;
}

/** A message that starts or steers a turn. */
export interface Message {
  /** Message text. */
  text: string;
  /** Who produced the message. */
  origin: MessageOrigin;
  /** File/selection attachments. */
  attachments?: MessageAttachment[];
  /** The model this message was (or will be) sent with. */
  model?: ModelSelection;
  /** The custom agent this message was (or will be) sent with. */
  agent?: AgentSelection;
  /** Provider-specific metadata for the message. */
  _meta?: Meta;
}

/** Token usage for a turn. */
export interface UsageInfo {
  /** Input tokens consumed. */
  inputTokens?: number;
  /** Output tokens generated. */
  outputTokens?: number;
  /** Model used. */
  model?: string;
  /** Tokens read from cache. */
  cacheReadTokens?: number;
  /** Provider-specific usage metadata. */
  _meta?: Meta;
}

/** Inline Markdown produced by the agent; `chat/delta` appends to it. */
export interface MarkdownResponsePart {
  /** Discriminant. */
  kind: 'markdown';
  /** Part id targeted by `chat/delta`. */
  id: string;
  /** Markdown content so far. */
  content: string;
}

/** Reasoning text produced by the model; `chat/reasoning` appends to it. */
export interface ReasoningResponsePart {
  /** Discriminant. */
  kind: 'reasoning';
  /** Part id targeted by `chat/reasoning`. */
  id: string;
  /** Reasoning text so far. */
  content: string;
}

/** A reference to content stored outside the state tree. */
export interface ContentRefResponsePart extends ContentRef {
  /** Discriminant. */
  kind: 'contentRef';
}

/**
 * Tool-call, system-notification and input-request parts. This server does not
 * produce them; it carries them through unchanged.
 */
export interface OpaqueResponsePart {
  /** Discriminant. */
  kind: 'toolCall' | 'systemNotification' | 'inputRequest';
  /** Variant-specific fields. */
  [key: string]: unknown;
}

/** One item of a turn's response, in stream order. */
export type ResponsePart = MarkdownResponsePart | ReasoningResponsePart | ContentRefResponsePart | OpaqueResponsePart;

/** A completed request/response cycle. */
export interface Turn {
  /** Turn id; also the `{turnId}` value of per-turn changesets. */
  id: string;
  /** ISO 8601 time the turn started. */
  startedAt?: string;
  /** Producer-measured duration in milliseconds, never negative. */
  duration?: number;
  /** The message that started the turn. */
  message: Message;
  /** The response, in stream order. */
  responseParts: ResponsePart[];
  /** Token usage, or `undefined` when not reported (key required by the schema, omitted on the wire). */
  usage: UsageInfo | undefined;
  /** How the turn ended. */
  state: TurnState;
  /** Error details when `state` is `error`. */
  error?: ErrorInfo;
}

/** The in-progress turn. */
export interface ActiveTurn {
  /** Turn id. */
  id: string;
  /** ISO 8601 time the turn started. */
  startedAt: string;
  /** The message that started the turn. */
  message: Message;
  /** The response so far, in stream order. */
  responseParts: ResponsePart[];
  /** Token usage so far, or `undefined` when not reported. */
  usage: UsageInfo | undefined;
}

/** How a chat came to exist. */
export type ChatOrigin =
  | { /** Created by the user. */ kind: 'user' }
  | {
      /** Forked from another chat. */ kind: 'fork';
      /** Source chat URI. */ chat: URI;
      /** Turn the fork was taken at. */ turnId: string;
    }
  | {
      /** Spawned by a tool call. */ kind: 'tool';
      /** Spawning chat URI. */ chat: URI;
      /** Spawning tool call id. */ toolCallId: string;
    };

/** How the user can interact with a chat. */
export type ChatInteractivity = 'full' | 'read-only' | 'hidden';

/** Catalogue entry for a chat, carried on `SessionState.chats`. */
export interface ChatSummary {
  /** Chat URI (`ahp-chat:/<id>`). */
  resource: URI;
  /** Chat title. */
  title: string;
  /** Status bitset (see `SessionStatus`). */
  status: SessionStatus;
  /** What the chat is doing right now, if anything. */
  activity?: string;
  /** ISO 8601 time of the last modification. */
  modifiedAt: string;
  /** How the chat came to exist. */
  origin?: ChatOrigin;
  /** How the user can interact with the chat; absent means `full`. */
  interactivity?: ChatInteractivity;
  /** Per-chat working directory; absent means the session's. */
  workingDirectory?: URI;
}

/** A message waiting to be delivered to the agent. */
export interface PendingMessage {
  /** Pending message id. */
  id: string;
  /** The message. */
  message: Message;
}

/** Full state of one chat: the summary fields inlined plus the turn list. */
export interface ChatState extends ChatSummary {
  /** Completed turns, oldest first. */
  turns: Turn[];
  /** Cursor for `fetchTurns` when older turns are not loaded. */
  turnsNextCursor?: string;
  /** The in-progress turn, if any. */
  activeTurn?: ActiveTurn;
  /** Message to inject into the current turn. */
  steeringMessage?: PendingMessage;
  /** Messages to start as new turns after the current one. */
  queuedMessages?: PendingMessage[];
  /** The user's in-progress input. */
  draft?: Message;
  /** Provider-specific metadata for the chat. */
  _meta?: JsonObject;
}
