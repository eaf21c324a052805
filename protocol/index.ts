/** The AHP 0.6 wire surface this server speaks: types, URIs, error codes and validators. */

export * from './common/state.js';
export * from './common/channel-state.js';
export * from './common/channels.js';
export * from './common/actions.js';
export * from './common/commands.js';
export * from './common/notifications.js';
export * from './common/errors.js';
export * from './common/jsonrpc.js';
export * from './common/version.js';

export * from './root/state.js';
export * from './root/actions.js';
export * from './root/commands.js';
export * from './root/notifications.js';

export * from './session/state.js';
export * from './session/actions.js';
export * from './session/commands.js';

export * from './chat/state.js';
export * from './chat/actions.js';
export * from './chat/commands.js';

export * from './changeset/state.js';
export * from './changeset/actions.js';
export * from './changeset/commands.js';
export * from './changeset/uris.js';

export {
  validateParams,
  isInboundMethod,
  paramsValidators,
  validateInitializeParams,
  validateReconnectParams,
  validatePingParams,
  validateSubscribeParams,
  validateUnsubscribeParams,
  validateResourceReadParams,
  validateListSessionsParams,
  validateCreateSessionParams,
  validateDisposeSessionParams,
  validateInvokeChangesetOperationParams,
  validateChangesetOperationTarget,
  validateFilesReviewChangedAction,
  validateDispatchActionParams,
  validateDispatchEnvelope,
  validateClientAction,
  CLIENT_DISPATCHABLE_ACTIONS,
} from './validate/index.js';
export type { Validation, InboundMethod, InboundParams, ClientAction, DispatchEnvelope } from './validate/index.js';

// This server's extensions to AHP: what it carries in `_meta`, and its own methods' params and results.
export type { ChangeKindName, ChangesetFileMeta, UnreadReason } from './extensions/changeset-file.js';
export type {
  BinaryFileDiff,
  ChangesetFileDiffParams,
  DiffHunk,
  LineEncoding,
  OversizedFileDiff,
  TextFileDiff,
  WorkspaceFileDiff,
} from './extensions/file-diff.js';
export type { TimelineMeta, TurnStats, UserAction } from './extensions/timeline.js';
export type * from './extensions/harness.js';
export type * from './extensions/mirror.js';
export type * from './extensions/operations.js';
export type * from './extensions/sessions.js';
export type * from './extensions/file-history.js';
export type * from './extensions/comments.js';
export type * from './extensions/provenance.js';
export { MAX_COMMENT_BYTES } from './extensions/comments.js';

// Every method served, with its params and result.
export type { Method, MethodMap, NotificationMethod, ParamsOf, RequestMethod, ResultOf } from './methods.js';
