import type { OutboundFrame } from '../channels/frames.js';

/**
 * Outbound WebSocket frames built by the server itself (RFC 6455 §5.2): one
 * unfragmented, unmasked text frame per JSON-RPC message, header and
 * payload in one buffer, so that a peer sends it with one write and several
 * of them with one `writev`. A frame fanned out to many peers is built once
 * and the same buffer handed to every socket.
 */

/** Wire bytes of the shared frames built so far, by the frame the channel store handed out. */
const built = new WeakMap<Uint8Array, Buffer>();

/** The complete WebSocket text frame carrying `frame`; for a shared frame (bytes), built once for every peer. */
export function wireFrame(frame: OutboundFrame): Buffer {
  if (typeof frame === 'string') {
    const length = Buffer.byteLength(frame, 'utf8');
    const out = Buffer.allocUnsafe(headerLength(length) + length);
    const offset = writeHeader(out, length);
    out.write(frame, offset, 'utf8');
    return out;
  }
  let out = built.get(frame);
  if (!out) {
    out = Buffer.allocUnsafe(headerLength(frame.byteLength) + frame.byteLength);
    out.set(frame, writeHeader(out, frame.byteLength));
    built.set(frame, out);
  }
  return out;
}

function headerLength(payloadLength: number): number {
  return payloadLength < 126 ? 2 : payloadLength < 65_536 ? 4 : 10;
}

/** Writes the header of a final text frame of `payloadLength` bytes; returns where the payload starts. */
function writeHeader(out: Buffer, payloadLength: number): number {
  out[0] = 0x81; // FIN, opcode 1 (text)
  if (payloadLength < 126) {
    out[1] = payloadLength;
    return 2;
  }
  if (payloadLength < 65_536) {
    out[1] = 126;
    out.writeUInt16BE(payloadLength, 2);
    return 4;
  }
  out[1] = 127;
  out.writeUInt32BE(Math.floor(payloadLength / 2 ** 32), 2);
  out.writeUInt32BE(payloadLength >>> 0, 6);
  return 10;
}
