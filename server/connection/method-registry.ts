import type { ChannelStore } from '../channels/channel-store.js';
import type { ClientConnection } from './client-connection.js';

/** What a method handler can reach. */
export interface MethodContext {
  /** The connection the message arrived on. */
  readonly connection: ClientConnection;
  /** The channel store. */
  readonly store: ChannelStore;
}

/** Checks a method's params; returns a message naming the offending field, or undefined when valid. */
export type ParamsCheck = (params: unknown) => string | undefined;

/** Answers one request; throw an `DomainError` to answer with an error. */
export type RequestHandler<P = never, R = unknown> = (params: P, ctx: MethodContext) => R | Promise<R>;

/** Handles one notification; its return value and errors are never sent back. */
export type NotificationHandler<P = never> = (params: P, ctx: MethodContext) => void | Promise<void>;

/** Options when registering a method. */
export interface MethodOptions {
  /**
   * Params check replacing the protocol validator for this method (for
   * methods the protocol module does not know, e.g. extensions).
   */
  check?: ParamsCheck;
  /** Serve the method before `initialize` (only `ping` and `reconnect` do). */
  allowBeforeInitialize?: boolean;
  /**
   * The response carries snapshots: frames produced after the request
   * arrives are held back until the response is written.
   */
  carriesSnapshots?: boolean;
}

/** One registered method. */
export interface MethodEntry {
  /** Request (answered) or notification (never answered). */
  readonly kind: 'request' | 'notification';
  /** The handler. */
  readonly handler: RequestHandler<unknown> | NotificationHandler<unknown>;
  /** Registration options. */
  readonly options: Readonly<MethodOptions>;
}

/**
 * Method name → handler. Core AHP methods are registered by the server;
 * other modules add theirs (`invokeChangesetOperation`, `harness/*`, ...).
 */
export class MethodRegistry {
  private readonly methods = new Map<string, MethodEntry>();

  /** Adds a request method. Throws if the name is taken. */
  registerRequest<P, R>(method: string, handler: RequestHandler<P, R>, options: MethodOptions = {}): void {
    this.add(method, { kind: 'request', handler: handler as RequestHandler<unknown>, options });
  }

  /** Adds a notification method. Throws if the name is taken. */
  registerNotification<P>(method: string, handler: NotificationHandler<P>, options: MethodOptions = {}): void {
    this.add(method, { kind: 'notification', handler: handler as NotificationHandler<unknown>, options });
  }

  /** The entry for a method, or undefined. */
  get(method: string): MethodEntry | undefined {
    return this.methods.get(method);
  }

  /** True when a method is registered. */
  has(method: string): boolean {
    return this.methods.has(method);
  }

  /** Names of the request methods whose responses carry snapshots. */
  snapshotMethods(): Set<string> {
    const out = new Set<string>();
    for (const [name, entry] of this.methods) if (entry.options.carriesSnapshots) out.add(name);
    return out;
  }

  private add(method: string, entry: MethodEntry): void {
    if (this.methods.has(method)) throw new Error(`method already registered: ${method}`);
    this.methods.set(method, entry);
  }
}
