import type { Message } from 'vscode-jsonrpc/node';
import type { RawData, WebSocket } from 'ws';
import type { OutboundFrame } from '../channels/frames.js';
import { errorResponseFrame, readFrame, type WireId } from './frames.js';
import { CloseCode, type TransportLimits } from './limits.js';
import { WsMessageReader, WsMessageWriter } from './ws-adapters.js';

/** Options for one WebSocket peer. */
export interface WsPeerOptions {
  /** Frame, buffer and flood bounds. */
  limits: TransportLimits;
  /**
   * Request methods whose response must reach the peer before any frame
   * produced after the request arrived (responses that carry snapshots, so
   * that no action envelope overtakes the snapshot it applies to).
   */
  isOrderedResponseMethod?: (method: string) => boolean;
}

/** Why a peer went away. */
export interface PeerCloseInfo {
  /** WebSocket close code (1006 when the socket dropped without a close frame). */
  code: number;
  /** Close reason text, possibly empty. */
  reason: string;
}

type CloseListener = (info: PeerCloseInfo) => void;

/**
 * One WebSocket client: decodes and checks inbound frames, exposes a
 * `vscode-jsonrpc` reader/writer pair, sends pre-serialized frames, and
 * enforces the transport limits. Misbehaviour only ever closes this peer.
 */
export class WsPeer {
  /** Reader to pass to `createMessageConnection`. */
  readonly reader = new WsMessageReader();
  /** Writer to pass to `createMessageConnection`. */
  readonly writer = new WsMessageWriter((message) => this.writeMessage(message));

  private readonly limits: TransportLimits;
  private readonly isOrdered: (method: string) => boolean;
  private readonly heldResponses = new Set<string | number>();
  private readonly heldFrames: OutboundFrame[] = [];
  private heldBytes = 0;
  private readonly closeListeners: CloseListener[] = [];
  private consecutiveBadFrames = 0;
  private closedInfo: PeerCloseInfo | undefined;

  constructor(
    private readonly socket: WebSocket,
    options: WsPeerOptions,
  ) {
    this.limits = options.limits;
    this.isOrdered = options.isOrderedResponseMethod ?? (() => false);
    socket.on('message', (data, isBinary) => this.onFrame(data, isBinary));
    // `ws` reports protocol violations (oversized frame → 1009, bad UTF-8 →
    // 1007) as an error and closes the socket itself; the close event follows.
    socket.on('error', () => undefined);
    socket.on('close', (code, reason) => this.markClosed({ code, reason: reason.toString('utf8') }));
  }

  /** True until the socket closes or the peer is disconnected for breaking a limit. */
  get isOpen(): boolean {
    return this.closedInfo === undefined;
  }

  /** Bytes queued for this peer and not yet handed to the network. */
  get bufferedAmount(): number {
    return this.socket.bufferedAmount;
  }

  /** Registers a listener for the end of this peer (called once). */
  onClose(listener: CloseListener): void {
    if (this.closedInfo) listener(this.closedInfo);
    else this.closeListeners.push(listener);
  }

  /**
   * Sends one pre-serialized JSON-RPC message. The same frame may be sent to
   * many peers; bytes are sent as they are, never copied or re-encoded per peer.
   */
  send(frame: OutboundFrame): void {
    if (this.closedInfo) return;
    if (this.heldResponses.size > 0) {
      this.heldFrames.push(frame);
      // Held frames count against the same bound as the socket buffer.
      this.heldBytes += typeof frame === 'string' ? frame.length : frame.byteLength;
      if (this.heldBytes + this.socket.bufferedAmount > this.limits.maxOutboundBufferBytes) this.disconnectSlowReader();
      return;
    }
    this.transmit(frame);
  }

  /** Closes the connection with a close frame. */
  close(code: number, reason: string): void {
    if (this.closedInfo) return;
    this.socket.close(code, reason);
    this.markClosed({ code, reason });
  }

  private writeMessage(message: Message): void {
    if (this.closedInfo) return;
    const frame = JSON.stringify(message);
    const id = (message as { id?: unknown }).id;
    const isResponse = !('method' in message) && (typeof id === 'string' || typeof id === 'number');
    if (isResponse && this.heldResponses.delete(id)) {
      this.transmit(frame);
      if (this.heldResponses.size === 0) this.flushHeld();
      return;
    }
    this.send(frame);
  }

  private flushHeld(): void {
    const frames = this.heldFrames.splice(0);
    this.heldBytes = 0;
    for (const frame of frames) {
      if (this.closedInfo) return;
      this.transmit(frame);
    }
  }

  private transmit(frame: OutboundFrame): void {
    // Bytes go out as a text frame: they are the UTF-8 of a JSON-RPC message.
    this.socket.send(frame, { binary: false });
    if (this.socket.bufferedAmount > this.limits.maxOutboundBufferBytes) {
      this.disconnectSlowReader();
    }
  }

  private disconnectSlowReader(): void {
    const reason = 'outbound buffer limit exceeded; reconnect to resume';
    // The close frame queues behind data the peer is not reading, so the
    // socket is torn down shortly after instead of waiting for a handshake.
    this.socket.close(CloseCode.TryAgainLater, reason);
    setTimeout(() => this.socket.terminate(), 1000).unref();
    this.markClosed({ code: CloseCode.TryAgainLater, reason });
  }

  private onFrame(data: RawData, isBinary: boolean): void {
    if (this.closedInfo) return;
    if (isBinary) {
      this.close(CloseCode.UnsupportedData, 'binary frames are not supported; send JSON-RPC as text frames');
      return;
    }
    const frame = readFrame(rawToString(data));
    if (frame.kind === 'invalid') {
      this.rejectFrame(frame.id, frame.code, frame.reason);
      return;
    }
    this.consecutiveBadFrames = 0;
    const message = frame.message as Message & { method?: string; id?: WireId };
    if (typeof message.method === 'string' && message.id !== undefined && message.id !== null && this.isOrdered(message.method)) {
      this.heldResponses.add(message.id);
    }
    this.reader.deliver(message);
  }

  private rejectFrame(id: WireId, code: number, reason: string): void {
    this.send(errorResponseFrame(id, code, reason));
    this.consecutiveBadFrames += 1;
    if (this.consecutiveBadFrames >= this.limits.maxConsecutiveBadFrames) {
      this.close(CloseCode.PolicyViolation, `too many invalid frames (${this.consecutiveBadFrames} in a row)`);
    }
  }

  private markClosed(info: PeerCloseInfo): void {
    if (this.closedInfo) return;
    this.closedInfo = info;
    this.heldFrames.length = 0;
    this.heldBytes = 0;
    this.heldResponses.clear();
    this.reader.end();
    this.writer.end();
    for (const listener of this.closeListeners.splice(0)) listener(info);
  }
}

function rawToString(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}
