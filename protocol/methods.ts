/**
 * Every method this server serves, in one map: its name, its params, and
 * for a request its result. The server's method registry, the command-line
 * client (CLI, hooks, MCP) and the web viewer's client are all typed by it,
 * so a handler or a call whose params or result disagree with the map does
 * not compile. AHP's own methods carry AHP's types; the others are this
 * server's extensions (`protocol/extensions/`).
 */
import type {
  DispatchActionParams,
  InitializeParams,
  InitializeResult,
  PingParams,
  PingResult,
  ReconnectParams,
  ReconnectResult,
  ResourceReadParams,
  ResourceReadResult,
  SubscribeParams,
  SubscribeResult,
  UnsubscribeParams,
} from './common/commands.js';
import type { ListSessionsParams, ListSessionsResult } from './root/commands.js';
import type { CreateSessionParams, CreateSessionResult, DisposeSessionParams, DisposeSessionResult } from './session/commands.js';
import type { ChangesetFileDiffParams, WorkspaceFileDiff } from './extensions/file-diff.js';
import type { ChangesetFilesParams, ChangesetFilesResult } from './extensions/changeset-files.js';
import type {
  BeforeEditParams,
  BeforeEditResult,
  PresentFilesParams,
  PresentFilesResult,
  SessionEndedParams,
  SessionEndedResult,
  StatusParams,
  StatusResult,
  TurnEndedParams,
  TurnEndedResult,
  TurnStartedParams,
  TurnStartedResult,
} from './extensions/harness.js';
import type { MirrorStatus, MirrorStatusParams } from './extensions/mirror.js';
import type { InvokeOperationParams, InvokeOperationResult } from './extensions/operations.js';
import type { ForgetSessionParams, ForgetSessionResult } from './extensions/sessions.js';
import type { FileHistoryParams, FileHistoryResult } from './extensions/file-history.js';
import type { ProvenanceParams, ProvenanceResult } from './extensions/provenance.js';
import type { AddCommentParams, CommentRefParams, ListCommentsParams, ListCommentsResult, ResolveCommentParams, ReviewComment } from './extensions/comments.js';

/**
 * Method name → `{ params; result }` for a request (answered), `{ params }`
 * for a notification (never answered), for every method a client may send.
 */
export interface MethodMap {
  // AHP 0.6
  /** The handshake: the first message on a connection. */
  initialize: { params: InitializeParams; result: InitializeResult };
  /** Resumes after a dropped connection: the envelopes missed, or fresh snapshots. */
  reconnect: { params: ReconnectParams; result: ReconnectResult };
  /** Checks that the server answers. */
  ping: { params: PingParams; result: PingResult };
  /** Starts receiving a channel's actions; answers with its current state. */
  subscribe: { params: SubscribeParams; result: SubscribeResult };
  /** Stops receiving a channel's actions. */
  unsubscribe: { params: UnsubscribeParams };
  /** Sends an action the client may take (marking files reviewed) to a channel. */
  dispatchAction: { params: DispatchActionParams };
  /** Pages through the sessions the server holds. */
  listSessions: { params: ListSessionsParams; result: ListSessionsResult };
  /** Starts recording a session over working directories. */
  createSession: { params: CreateSessionParams; result: CreateSessionResult };
  /** Removes a session: its channels go (`root/sessionRemoved`, its changesets `cleared`) and its history with it. */
  disposeSession: { params: DisposeSessionParams; result: DisposeSessionResult };
  /** Reads content by URI: a file's side in a changeset, or a file a turn presented. */
  resourceRead: { params: ResourceReadParams; result: ResourceReadResult };
  /** Runs an operation a changeset offers (revert, restore, undo…); `_meta` carries this server's options. */
  invokeChangesetOperation: { params: InvokeOperationParams; result: InvokeOperationResult };

  // This server's extensions
  /** A harness says a turn starts. */
  'harness/turnStarted': { params: TurnStartedParams; result: TurnStartedResult };
  /** A harness says a tool is about to write files. */
  'harness/beforeEdit': { params: BeforeEditParams; result: BeforeEditResult };
  /** A harness says a turn ended; answers with what it changed. */
  'harness/turnEnded': { params: TurnEndedParams; result: TurnEndedResult };
  /** A harness says the agent's session ended: it records no more and stays reviewable. */
  'harness/sessionEnded': { params: SessionEndedParams; result: SessionEndedResult };
  /** A harness presents files for the user to look at. */
  'harness/presentFiles': { params: PresentFilesParams; result: PresentFilesResult };
  /** What is being recorded: sessions, recent turns, stores. */
  'harness/status': { params: StatusParams | undefined; result: StatusResult };
  /** The diff of one file of a changeset, in hunks. */
  changesetFileDiff: { params: ChangesetFileDiffParams; result: WorkspaceFileDiff };
  /** Every file of a changeset in pages (past the state's cap too), filtered, compact or in full. */
  changesetFiles: { params: ChangesetFilesParams; result: ChangesetFilesResult };
  /** Every turn and step that changed one file, oldest first, with its versions. */
  fileHistory: { params: FileHistoryParams; result: FileHistoryResult };
  /** Removes a session and its history from the stores for good. */
  forgetSession: { params: ForgetSessionParams; result: ForgetSessionResult };
  /** What is still to be pushed to the mirror remote (only while mirroring). */
  'mirror/status': { params: MirrorStatusParams; result: MirrorStatus };
  /** Leaves a review comment on lines of a file in a changeset, or on a whole turn. */
  'comments/add': { params: AddCommentParams; result: ReviewComment };
  /** A session's review comments, oldest first; `follow` sends `comments/changed` from then on. */
  'comments/list': { params: ListCommentsParams; result: ListCommentsResult };
  /** Marks a comment resolved, by the reviewer or by the agent that addressed it. */
  'comments/resolve': { params: ResolveCommentParams; result: ReviewComment };
  /** Opens a resolved comment again. */
  'comments/reopen': { params: CommentRefParams; result: ReviewComment };
  /** Deletes a comment. */
  'comments/delete': { params: CommentRefParams; result: null };
  /** Who last wrote each line of a file: a turn, the user, or the history before recording. */
  'provenance/lines': { params: ProvenanceParams; result: ProvenanceResult };
}

/** Any method a client may send. */
export type Method = keyof MethodMap;

/** The methods that are answered. */
export type RequestMethod = { [M in Method]: MethodMap[M] extends { result: unknown } ? M : never }[Method];

/** The methods that are never answered. */
export type NotificationMethod = Exclude<Method, RequestMethod>;

/** The params of a method. */
export type ParamsOf<M extends Method> = MethodMap[M]['params'];

/** The result of a request method. */
export type ResultOf<M extends RequestMethod> = MethodMap[M] extends { result: infer R } ? R : never;
