import type { Duplex } from 'node:stream';
import type { Message } from 'vscode-jsonrpc/node';
import type { RawData, WebSocket } from 'ws';
import type { OutboundFrame } from '../channels/frames.js';
import { flushQueue, type Flushable } from './flush-queue.js';
import { errorResponseFrame, readFrame, type WireId } from './frames.js';
import { CloseCode, type TransportLimits } from './limits.js';
import { wireFrame } from './wire-frames.js';
import { writeObserver } from './write-trace.js';
import { WsMessageReader, WsMessageWriter } from './ws-adapters.js';

/** `WebSocket.OPEN`. */
const OPEN = 1;

/** Bytes of frames a peer's outbox holds before they are written without waiting for the flush queue. */
const BATCH_BYTES = 64 * 1024;

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
 *
 * Outbound frames wait in the peer's outbox until the flush queue writes
 * them (after the code that sent them returns; every frame waiting goes out
 * in one write) or until `flush()`: a response, and the echo of the
 * client's own action, are written at once, behind whatever was waiting.
 */
export class WsPeer implements Flushable {
  /** Reader to pass to `createMessageConnection`. */
  readonly reader = new WsMessageReader();
  /** Writer to pass to `createMessageConnection`. */
  readonly writer = new WsMessageWriter((message) => this.writeMessage(message));

  private readonly limits: TransportLimits;
  private readonly isOrdered: (method: string) => boolean;
  private readonly heldResponses = new Set<string | number>();
  private readonly heldFrames: OutboundFrame[] = [];
  private heldBytes = 0;
  /** Frames sent and not yet written to the socket, oldest first. */
  private outbox: OutboundFrame[] = [];
  private outboxBytes = 0;
  /** The TCP socket under the WebSocket, written directly with frames built here; undefined when `ws` must frame them. */
  private readonly raw: Duplex | undefined;
  private readonly closeListeners: CloseListener[] = [];
  private consecutiveBadFrames = 0;
  private closedInfo: PeerCloseInfo | undefined;

  constructor(
    private readonly socket: WebSocket,
    options: WsPeerOptions,
  ) {
    this.limits = options.limits;
    this.isOrdered = options.isOrderedResponseMethod ?? (() => false);
    this.raw = rawSocketOf(socket);
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
    return this.outboxBytes + this.socket.bufferedAmount;
  }

  /** Registers a listener for the end of this peer (called once). */
  onClose(listener: CloseListener): void {
    if (this.closedInfo) listener(this.closedInfo);
    else this.closeListeners.push(listener);
  }

  /**
   * Sends one pre-serialized JSON-RPC message, after every frame sent before
   * it. The same frame may be sent to many peers; a shared frame's bytes are
   * framed once for all of them, never re-encoded per peer.
   */
  send(frame: OutboundFrame): void {
    if (this.closedInfo) return;
    if (this.heldResponses.size > 0) {
      this.heldFrames.push(frame);
      // Held frames count against the same bound as the socket buffer.
      this.heldBytes += frameBytes(frame);
      if (this.heldBytes + this.bufferedAmount > this.limits.maxOutboundBufferBytes) this.disconnectSlowReader();
      return;
    }
    this.enqueue(frame);
  }

  /** Writes every frame waiting for this peer now, in one write, instead of when the flush queue comes to it. */
  flush(): void {
    flushQueue.delete(this);
    if (this.outbox.length === 0) return;
    const frames = this.outbox;
    this.outbox = [];
    this.outboxBytes = 0;
    if (this.closedInfo || this.socket.readyState !== OPEN) return;
    writeObserver()?.(this, frames);
    const raw = this.raw;
    if (raw) {
      if (frames.length === 1) raw.write(wireFrame(frames[0]!));
      else {
        raw.cork();
        for (const frame of frames) raw.write(wireFrame(frame));
        raw.uncork();
      }
    } else {
      // Bytes go out as a text frame: they are the UTF-8 of a JSON-RPC message.
      for (const frame of frames) this.socket.send(frame, { binary: false });
    }
    if (this.socket.bufferedAmount > this.limits.maxOutboundBufferBytes) this.disconnectSlowReader();
  }

  /** Closes the connection with a close frame, after the frames already sent. */
  close(code: number, reason: string): void {
    if (this.closedInfo) return;
    this.flush();
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
      this.enqueue(frame);
      if (this.heldResponses.size === 0) this.releaseHeld();
    } else {
      this.send(frame);
    }
    // A client waits on its answers: they go out at once.
    this.flush();
  }

  private releaseHeld(): void {
    const frames = this.heldFrames.splice(0);
    this.heldBytes = 0;
    for (const frame of frames) {
      if (this.closedInfo) return;
      this.enqueue(frame);
    }
  }

  private enqueue(frame: OutboundFrame): void {
    this.outbox.push(frame);
    this.outboxBytes += frameBytes(frame);
    // Past a batch's worth the frames go to the socket now, whose buffer is what the limit bounds.
    if (this.outboxBytes >= BATCH_BYTES) this.flush();
    else if (this.outbox.length === 1) flushQueue.add(this);
  }

  private dropOutbox(): void {
    this.outbox = [];
    this.outboxBytes = 0;
    flushQueue.delete(this);
  }

  private disconnectSlowReader(): void {
    this.dropOutbox();
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
    this.dropOutbox();
    this.reader.end();
    this.writer.end();
    for (const listener of this.closeListeners.splice(0)) listener(info);
  }
}

/** Bytes a frame takes (a string's UTF-16 length stands in for its UTF-8 length). */
function frameBytes(frame: OutboundFrame): number {
  return typeof frame === 'string' ? frame.length : frame.byteLength;
}

/**
 * The TCP socket under a `ws` WebSocket, which `ws` writes its frames to
 * synchronously (so ours and its control frames stay in order), or
 * undefined when frames must go through `ws`: an extension was negotiated,
 * or this `ws` does not hold the socket where 8.x does.
 */
function rawSocketOf(socket: WebSocket): Duplex | undefined {
  if (socket.extensions !== '') return undefined;
  const raw = (socket as unknown as { _socket?: unknown })._socket;
  return raw !== null && typeof raw === 'object' && typeof (raw as Duplex).write === 'function' && typeof (raw as Duplex).cork === 'function'
    ? (raw as Duplex)
    : undefined;
}

function rawToString(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}
