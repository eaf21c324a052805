import {
  AHP_PROTOCOL_VERSION,
  AhpErrorCodes,
  parseChannel,
  type Implementation,
  type InitializeParams,
  type InitializeResult,
  type ReconnectParams,
  type ReconnectResult,
  type Snapshot,
  type UnsupportedProtocolVersionErrorData,
  type URI,
} from '../../protocol/index.js';
import { DomainError, invalidRequest } from '../domain-error.js';
import type { MethodContext } from './method-registry.js';

/** Protocol versions this server speaks, most preferred first. */
const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [AHP_PROTOCOL_VERSION];

/**
 * Later versions VS Code's agent host client offers alone (it sends only
 * its own version). Every action and notification this server sends was
 * introduced at or before 0.6.0 by VS Code's own version registry, so a
 * connection that negotiates one of these gets exactly the 0.6 messages;
 * it is chosen only when the client offers no version we implement fully.
 */
const VSCODE_COMPATIBLE_VERSIONS: readonly string[] = ['0.9.0', '0.8.0', '0.7.0'];

/** Close code sent after refusing a client's protocol versions (the spec says to close). */
const CLOSE_AFTER_VERSION_REFUSAL = 1000;

/** The client's most preferred version that we speak, else one VS Code offers that the 0.6 messages serve, else undefined. */
function negotiateVersion(offered: readonly string[]): string | undefined {
  return offered.find((version) => SUPPORTED_PROTOCOL_VERSIONS.includes(version)) ?? offered.find((version) => VSCODE_COMPATIBLE_VERSIONS.includes(version));
}

/** `initialize`: version negotiation, client id, initial subscriptions. */
export async function initialize(params: InitializeParams, ctx: MethodContext, serverInfo: Implementation): Promise<InitializeResult> {
  const { connection } = ctx;
  if (!connection.claimInitialize()) throw invalidRequest('"initialize" was already sent on this connection');
  const version = negotiateVersion(params.protocolVersions);
  if (!version) {
    const data: UnsupportedProtocolVersionErrorData = { supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS] };
    connection.closeSoon(CLOSE_AFTER_VERSION_REFUSAL, 'unsupported protocol version');
    throw new DomainError(
      AhpErrorCodes.UnsupportedProtocolVersion,
      `none of the offered protocol versions (${params.protocolVersions.join(', ') || 'none'}) is supported; this server speaks ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}`,
      data,
    );
  }
  const requested = unique(params.initialSubscriptions ?? []).filter((uri) => parseChannel(uri) !== undefined);
  await Promise.all(requested.map((uri) => ctx.store.ensureChannel(uri)));
  connection.markInitialized(params.clientId, version);
  // Subscribing and snapshotting happen in one synchronous pass so that no
  // envelope falls between a snapshot and the live stream.
  const snapshots: Snapshot[] = [];
  for (const uri of requested) {
    const snapshot = connection.subscribeTo(uri);
    if (snapshot) snapshots.push(snapshot);
  }
  return { protocolVersion: version, serverSeq: ctx.store.serverSeq, serverInfo, snapshots };
}

/**
 * `reconnect`: resubscribes and returns the missed envelopes when every
 * requested channel can be patched by them — the replay log still reaches
 * back to `lastSeenServerSeq` and each channel already existed then — else
 * fresh snapshots of all of them (AHP has one result type per response).
 * Channels that no longer exist are listed in `missing`.
 */
export async function reconnect(params: ReconnectParams, ctx: MethodContext): Promise<ReconnectResult> {
  const { connection, store } = ctx;
  const requested = unique(params.subscriptions);
  const missing: URI[] = [];
  const present: URI[] = [];
  let recreated = false;
  for (const uri of requested) {
    if (parseChannel(uri) === undefined) {
      missing.push(uri);
      continue;
    }
    if (store.hasChannel(uri)) {
      present.push(uri);
      continue;
    }
    const error = await store.ensureChannel(uri);
    if (error) {
      missing.push(uri);
    } else {
      // Produced afresh: the client's copy cannot be patched by replay.
      recreated = true;
      present.push(uri);
    }
  }
  if (!connection.isInitialized) connection.markInitialized(params.clientId, SUPPORTED_PROTOCOL_VERSIONS[0] as string);
  const seen = params.lastSeenServerSeq;
  // A channel created after `seen` has a base state the client never had.
  const replayable = !recreated && present.every((uri) => !store.hasChannel(uri) || store.canReplayChannel(uri, seen));
  const replay = replayable ? store.replaySince(seen) : undefined;
  const live = new Set<URI>();
  const snapshots: Snapshot[] = [];
  for (const uri of present) {
    const snapshot = connection.subscribeTo(uri);
    if (!snapshot) continue;
    live.add(uri);
    snapshots.push(snapshot);
  }
  if (replay) {
    const gone = present.filter((uri) => !live.has(uri));
    return { type: 'replay', actions: replay.filter((envelope) => live.has(envelope.channel)), missing: [...missing, ...gone] };
  }
  return { type: 'snapshot', snapshots };
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
