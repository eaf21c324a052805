/**
 * Channel URIs (`spec/subscriptions.md`): `ahp-root://`, `ahp-session:/<id>`,
 * `ahp-chat:/<id>` and `ahp-changeset:/<id>`.
 */

import type { ChannelKind } from './channel-state.js';
import type { URI } from './state.js';

export type { ChannelKind } from './channel-state.js';

/** The root channel URI, the `channel` of every connection-level command. */
export const ROOT_CHANNEL = 'ahp-root://';
/** The literal type of {@link ROOT_CHANNEL}. */
export type RootChannelUri = typeof ROOT_CHANNEL;

/** URI prefix of session channels. */
export const SESSION_PREFIX = 'ahp-session:/';
/** URI prefix of chat channels. */
export const CHAT_PREFIX = 'ahp-chat:/';
/** URI prefix of changeset channels. */
export const CHANGESET_PREFIX = 'ahp-changeset:/';

/** A channel URI split into its kind and (for all but root) its id. */
export interface ParsedChannel {
  /** Which channel kind the URI addresses. */
  kind: ChannelKind;
  /** The path after the scheme prefix; empty for the root channel. */
  id: string;
}

/**
 * Splits a channel URI into kind and id, or returns `undefined` for URIs we do
 * not serve. Session and chat ids are one path segment (so
 * `ahp-session:/<id>/annotations` is not a session channel); changeset ids are
 * server-defined and may contain `/`.
 */
export function parseChannel(uri: URI): ParsedChannel | undefined {
  if (uri === ROOT_CHANNEL) return { kind: 'root', id: '' };
  const single = (prefix: string): string | undefined => {
    if (!uri.startsWith(prefix)) return undefined;
    const id = uri.slice(prefix.length);
    return id.length > 0 && !id.includes('/') ? id : undefined;
  };
  const session = single(SESSION_PREFIX);
  if (session !== undefined) return { kind: 'session', id: session };
  const chat = single(CHAT_PREFIX);
  if (chat !== undefined) return { kind: 'chat', id: chat };
  if (uri.startsWith(CHANGESET_PREFIX)) {
    const id = uri.slice(CHANGESET_PREFIX.length);
    if (id.length > 0 && !id.startsWith('/')) return { kind: 'changeset', id };
  }
  return undefined;
}

/** The kind of channel a URI addresses, or `undefined` for URIs we do not serve. */
export function channelKindOf(uri: URI): ChannelKind | undefined {
  return parseChannel(uri)?.kind;
}

/** The session channel URI for a session id. */
export function sessionUri(id: string): URI {
  return SESSION_PREFIX + id;
}

/** The chat channel URI for a chat id. */
export function chatUri(id: string): URI {
  return CHAT_PREFIX + id;
}

/** The changeset channel URI for a changeset id (which may contain `/`). */
export function changesetUri(id: string): URI {
  return CHANGESET_PREFIX + id;
}
