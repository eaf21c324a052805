/**
 * How a module serves methods: a table from method name to handler, typed
 * by the protocol's method map, which `service.ts` registers on the server.
 * A name the map does not know, or a handler whose params or result differ
 * from the map's, does not compile. Defined here, below every layer that
 * serves methods, so that none of them needs the server.
 */
import type {
  InboundMethod,
  Method,
  NotificationMethod,
  ParamsOf,
  RequestMethod,
  ResourceReadParams,
  ResourceReadResult,
  ResultOf,
  ServerNotificationMap,
} from '../protocol/index.js';

/** What a handler may reach of the client that sent the message. */
export interface Caller {
  /** The client's own id from `initialize`; what it dispatches is recorded with it as the origin. */
  readonly clientId: string | undefined;
  /** Sends a notification to this client only, such as the progress of its request. */
  notify<N extends keyof ServerNotificationMap>(method: N, params: ServerNotificationMap[N]): void;
  /** Runs `listener` once when this client disconnects (at once when it already has), so what was kept for it can go. */
  onClose(listener: () => void): void;
}

/** Checks a method's params; returns a message naming the offending field, or undefined when they are valid. */
export type ParamsCheck = (params: unknown) => string | undefined;

/** Answers one request; throw a `DomainError` to answer with an error. */
export type RequestHandler<M extends RequestMethod, C = Caller> = (params: ParamsOf<M>, caller: C) => ResultOf<M> | Promise<ResultOf<M>>;

/** Handles one notification; its return value and errors are never sent back. */
export type NotificationHandler<M extends NotificationMethod, C = Caller> = (params: ParamsOf<M>, caller: C) => void | Promise<void>;

/** How a method is served besides its handler. */
export interface MethodOptions {
  /** Served before `initialize` (only `ping` and `reconnect` are). */
  allowBeforeInitialize?: boolean;
  /** The response carries snapshots: frames produced after the request arrives are held back until the response is written. */
  carriesSnapshots?: boolean;
}

/**
 * The params check: the protocol's validators know AHP's methods, so for
 * them `check` replaces the validator only when given; every other method
 * must bring its own.
 */
type CheckOf<M extends Method> = M extends InboundMethod ? { check?: ParamsCheck } : { check: ParamsCheck };

/** One method's handler, params check and options. */
export type MethodDefinition<M extends Method, C = Caller> = (M extends RequestMethod
  ? { request: RequestHandler<M, C> }
  : M extends NotificationMethod
    ? { notification: NotificationHandler<M, C> }
    : never) &
  CheckOf<M> &
  MethodOptions;

/** Methods a module serves: method name → definition. */
export type MethodTable<C = Caller> = { [M in Method]?: MethodDefinition<M, C> };

/**
 * Serves `resourceRead` for the URIs of one scheme (e.g. the content URIs
 * a changeset's files point at).
 */
export interface ContentProvider {
  /** Reads one URI; throw a `DomainError` (e.g. -32006 ContentNotFound) when it cannot. */
  read(params: ResourceReadParams, caller: Caller): Promise<ResourceReadResult> | ResourceReadResult;
}

/** Content providers a module serves: URI scheme (`file:`) → provider. */
export type ContentProviders = Record<string, ContentProvider>;
