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

/** The protocol version this server speaks; `data.supportedVersions` of a refusal lists it. */
const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [AHP_PROTOCOL_VERSION];

/** Close code sent after refusing a client's protocol versions (the spec says to close). */
const CLOSE_AFTER_VERSION_REFUSAL = 1000;

/** `MAJOR.MINOR.PATCH` with no leading zeros, pre-release or build metadata (AHP uses none). */
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;

/**
 * The range of versions compatible with a version, as AHP's versioning has
 * it: the same major version from 1.0 on, before it the same minor version
 * ("0.6"). Undefined for a string that is not a version.
 */
function compatibleRange(version: string): string | undefined {
  const m = SEMVER.exec(version);
  if (!m) return undefined;
  return m[1] === '0' ? `0.${m[2]}` : m[1];
}

/** The versions this server speaks: its own and every one compatible with it. */
const SPOKEN = compatibleRange(AHP_PROTOCOL_VERSION)!;

/**
 * The client's most preferred offered version that this server speaks: one
 * AHP's versioning calls compatible with ours (within a compatible range,
 * additions are optional and a peer ignores what it does not know). The
 * entry is answered as the client wrote it, as AHP's negotiation has the
 * server return one of the offered entries. Undefined when none is.
 */
function negotiateVersion(offered: readonly string[]): string | undefined {
  return offered.find((version) => compatibleRange(version) === SPOKEN);
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
      `none of the offered protocol versions (${params.protocolVersions.join(', ') || 'none'}) is supported; this server speaks ${SPOKEN}.x (${SUPPORTED_PROTOCOL_VERSIONS.join(', ')} and its patch versions)`,
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
