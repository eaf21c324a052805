import type { Method } from '../../protocol/index.js';
import type { ChannelStore } from '../channels/channel-store.js';
import type { Caller, MethodDefinition, MethodOptions, MethodTable, ParamsCheck } from '../method-table.js';
import type { ClientConnection } from './client-connection.js';

/** What the AHP core methods reach besides what any handler may: the connection itself and the channel store. */
export interface MethodContext extends Caller {
  /** The connection the message arrived on. */
  readonly connection: ClientConnection;
  /** The channel store. */
  readonly store: ChannelStore;
}

/** One registered method, as the connection routes it. */
export interface MethodEntry {
  /** Request (answered) or notification (never answered). */
  readonly kind: 'request' | 'notification';
  /** The handler. */
  readonly handler: (params: never, ctx: MethodContext) => unknown;
  /** The method's own params check; the protocol's validator runs when there is none. */
  readonly check: ParamsCheck | undefined;
  /** Registration options. */
  readonly options: Readonly<MethodOptions>;
}

/**
 * Method name → handler, typed by the protocol's method map. `service.ts`
 * registers each module's table here; the server registers the AHP core
 * methods.
 */
export class MethodRegistry {
  private readonly methods = new Map<string, MethodEntry>();

  /** Adds every method of a table. Throws if a name is taken. */
  register(table: MethodTable<MethodContext>): void {
    for (const [method, definition] of Object.entries(table) as [Method, MethodDefinition<Method, MethodContext> | undefined][]) {
      if (!definition) continue;
      const { check, allowBeforeInitialize, carriesSnapshots } = definition as { check?: ParamsCheck } & MethodOptions;
      const options: MethodOptions = {
        ...(allowBeforeInitialize ? { allowBeforeInitialize } : {}),
        ...(carriesSnapshots ? { carriesSnapshots } : {}),
      };
      const entry: MethodEntry =
        'request' in definition
          ? { kind: 'request', handler: definition.request as MethodEntry['handler'], check, options }
          : { kind: 'notification', handler: (definition as { notification: MethodEntry['handler'] }).notification, check, options };
      if (this.methods.has(method)) throw new Error(`method already registered: ${method}`);
      this.methods.set(method, entry);
    }
  }

  /** The entry for a method, or undefined. */
  get(method: string): MethodEntry | undefined {
    return this.methods.get(method);
  }
}
