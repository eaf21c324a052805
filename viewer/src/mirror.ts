/**
 * The client's copy of every subscribed channel, with write-ahead
 * reconciliation (AHP `guide/reconciliation.md`): per channel a confirmed
 * state (what the server acknowledged), the actions this client dispatched
 * that are not yet echoed (by `clientSeq`), and the optimistic state the UI
 * renders — the confirmed state with the pending actions replayed on top.
 * Every state change goes through the shared reducers.
 */
import { channelKindOf } from '../../protocol/common/channels.js';
import type { ActionEnvelope, ChannelKind, ChannelState, ChannelStateByKind, Snapshot, StateAction, URI } from '../../protocol/index.js';
import { reduce } from '../../reducers/index.js';

/** An action applied optimistically, waiting for its echo. */
export interface PendingAction {
  /** The `clientSeq` it was dispatched with; the echo's `origin.clientSeq` matches it. */
  clientSeq: number;
  /** The action as dispatched. */
  action: StateAction;
}

interface Mirrored {
  kind: ChannelKind;
  confirmed: ChannelState;
  /** `serverSeq` the confirmed state is current at; envelopes at or below it are already contained. */
  fromSeq: number;
  pending: PendingAction[];
  optimistic: ChannelState;
}

/** What applying one envelope did, for the caller to surface. */
export interface EnvelopeOutcome {
  /** The channel's rendered state changed. */
  changed: boolean;
  /** Set when the envelope was the server refusing one of our actions. */
  rejected?: { action: StateAction; reason: string };
}

/** Mirrored channel states of one client. */
export class ChannelMirror {
  private readonly channels = new Map<URI, Mirrored>();

  constructor(private readonly clientId: () => string) {}

  /** The optimistic state of a channel (what to render), or undefined when not mirrored. */
  state<K extends ChannelKind>(uri: URI, _kind?: K): ChannelStateByKind[K] | undefined {
    return this.channels.get(uri)?.optimistic as ChannelStateByKind[K] | undefined;
  }

  /** True when the channel is mirrored. */
  has(uri: URI): boolean {
    return this.channels.has(uri);
  }

  /** Every mirrored channel URI. */
  uris(): URI[] {
    return [...this.channels.keys()];
  }

  /** Pending actions of a channel, oldest first. */
  pendingOf(uri: URI): readonly PendingAction[] {
    return this.channels.get(uri)?.pending ?? [];
  }

  /**
   * Takes a snapshot as the new confirmed state. Pending actions are
   * dropped: a snapshot comes from subscribe or reconnect, after which the
   * server no longer echoes what was in flight before (AHP reconnection).
   */
  adopt(snapshot: Snapshot): void {
    const kind = channelKindOf(snapshot.resource);
    if (!kind) return;
    this.channels.set(snapshot.resource, {
      kind,
      confirmed: snapshot.state,
      fromSeq: snapshot.fromSeq,
      pending: [],
      optimistic: snapshot.state,
    });
  }

  /** Forgets a channel. */
  drop(uri: URI): void {
    this.channels.delete(uri);
  }

  /** Drops every pending action of every channel (after a reconnect); returns the channels that changed. */
  clearPending(): URI[] {
    const changed: URI[] = [];
    for (const [uri, m] of this.channels) {
      if (m.pending.length === 0) continue;
      m.pending = [];
      m.optimistic = m.confirmed;
      changed.push(uri);
    }
    return changed;
  }

  /** Applies our own action optimistically and remembers it until the echo; false when the channel is not mirrored. */
  addPending(uri: URI, pending: PendingAction): boolean {
    const m = this.channels.get(uri);
    if (!m) return false;
    m.pending.push(pending);
    m.optimistic = reduce(m.kind, m.optimistic, pending.action);
    return true;
  }

  /** Removes one pending action (e.g. it could not be sent); returns whether the channel changed. */
  removePending(uri: URI, clientSeq: number): boolean {
    const m = this.channels.get(uri);
    if (!m) return false;
    const before = m.pending.length;
    m.pending = m.pending.filter((p) => p.clientSeq !== clientSeq);
    if (m.pending.length === before) return false;
    this.rebase(m);
    return true;
  }

  /**
   * Reconciles one envelope: our echo pops its pending action and lands in
   * the confirmed state; a foreign action lands in the confirmed state and
   * the pending ones are replayed on top (rebase); a rejection of ours drops
   * the pending action, which reverts its optimistic effect.
   */
  apply(envelope: ActionEnvelope): EnvelopeOutcome {
    const m = this.channels.get(envelope.channel);
    if (!m) return { changed: false };
    const ours = envelope.origin !== undefined && envelope.origin.clientId === this.clientId();
    if (envelope.rejectionReason !== undefined) {
      if (!ours) return { changed: false };
      const had = m.pending.length;
      m.pending = m.pending.filter((p) => p.clientSeq !== envelope.origin!.clientSeq);
      if (m.pending.length !== had) this.rebase(m);
      return { changed: m.pending.length !== had, rejected: { action: envelope.action, reason: envelope.rejectionReason } };
    }
    const previous = m.optimistic;
    if (ours) m.pending = m.pending.filter((p) => p.clientSeq !== envelope.origin!.clientSeq);
    // An envelope at or below fromSeq is already contained in the confirmed state.
    if (envelope.serverSeq > m.fromSeq) {
      m.confirmed = reduce(m.kind, m.confirmed, envelope.action);
      m.fromSeq = envelope.serverSeq;
    }
    this.rebase(m);
    return { changed: m.optimistic !== previous };
  }

  private rebase(m: Mirrored): void {
    let state = m.confirmed;
    for (const p of m.pending) state = reduce(m.kind, state, p.action);
    m.optimistic = state;
  }
}
