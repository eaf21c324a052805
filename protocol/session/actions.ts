/** Session channel actions (`session/*`) this server emits or reduces. */

import type { ErrorInfo, Meta, URI } from '../common/state.js';
import type { ChatSummary } from '../chat/state.js';
import type { Changeset } from '../changeset/state.js';

/** The backend initialised; lifecycle becomes `ready` and `status` is left alone. */
export interface SessionReadyAction {
  /** Discriminant. */
  type: 'session/ready';
}

/** The backend failed to initialise. */
export interface SessionCreationFailedAction {
  /** Discriminant. */
  type: 'session/creationFailed';
  /** What went wrong. */
  error: ErrorInfo;
}

/** Upsert a chat into the catalogue by `summary.resource`. */
export interface SessionChatAddedAction {
  /** Discriminant. */
  type: 'session/chatAdded';
  /** The chat's full summary. */
  summary: ChatSummary;
}

/** Remove a chat from the catalogue; clears `defaultChat` when it pointed there. */
export interface SessionChatRemovedAction {
  /** Discriminant. */
  type: 'session/chatRemoved';
  /** URI of the chat to remove; unknown URIs are a no-op. */
  chat: URI;
}

/** Merge changed summary fields onto one catalogue entry. */
export interface SessionChatUpdatedAction {
  /** Discriminant. */
  type: 'session/chatUpdated';
  /** URI of the chat whose summary changed; unknown URIs are a no-op. */
  chat: URI;
  /** Changed fields; `resource` is an identity field and is ignored. */
  changes: Partial<ChatSummary>;
}

/** The default chat routing hint changed. */
export interface SessionDefaultChatChangedAction {
  /** Discriminant. */
  type: 'session/defaultChatChanged';
  /** New default chat URI; omit to clear. */
  defaultChat?: URI;
}

/** The session title changed (auto-generated or a rename). */
export interface SessionTitleChangedAction {
  /** Discriminant. */
  type: 'session/titleChanged';
  /** New title. */
  title: string;
}

/** The session's activity description changed. */
export interface SessionActivityChangedAction {
  /** Discriminant. */
  type: 'session/activityChanged';
  /** New activity text, or `undefined` to clear it. */
  activity: string | undefined;
}

/** The changeset catalogue changed (full replacement). */
export interface SessionChangesetsChangedAction {
  /** Discriminant. */
  type: 'session/changesetsChanged';
  /** New catalogue, or `undefined` to clear it. */
  changesets: Changeset[] | undefined;
}

/** The session's `_meta` was replaced. */
export interface SessionMetaChangedAction {
  /** Discriminant. */
  type: 'session/metaChanged';
  /** New `_meta`, or `undefined` to clear it. */
  _meta: Meta | undefined;
}

/** The read flag changed. */
export interface SessionIsReadChangedAction {
  /** Discriminant. */
  type: 'session/isReadChanged';
  /** Whether the session has been read. */
  isRead: boolean;
}

/** The archived flag changed. */
export interface SessionIsArchivedChangedAction {
  /** Discriminant. */
  type: 'session/isArchivedChanged';
  /** Whether the session is archived. */
  isArchived: boolean;
}

/** Every action the session reducer handles. */
export type SessionAction =
  | SessionReadyAction
  | SessionCreationFailedAction
  | SessionChatAddedAction
  | SessionChatRemovedAction
  | SessionChatUpdatedAction
  | SessionDefaultChatChangedAction
  | SessionTitleChangedAction
  | SessionActivityChangedAction
  | SessionChangesetsChangedAction
  | SessionMetaChangedAction
  | SessionIsReadChangedAction
  | SessionIsArchivedChangedAction;

/** The `type` of every session action. */
export type SessionActionType = SessionAction['type'];
