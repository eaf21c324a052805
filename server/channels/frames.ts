/**
 * Outbound JSON-RPC frames: what the channel store fans out to its
 * subscribers and what a connection sends to its client. Serialised once,
 * handed to every socket as the same bytes. The transport writes them; it
 * decodes inbound frames itself (`transport/frames.ts`).
 */

/** One serialized JSON-RPC message: its text, or that text's UTF-8 bytes when it goes to many peers. */
export type OutboundFrame = string | Uint8Array;

/**
 * The UTF-8 bytes of a frame sent to many peers. A socket handed a string
 * encodes it again for itself, so one big envelope to 100 subscribers would
 * otherwise be copied 100 times.
 */
export function sharedFrame(text: string): Buffer {
  return Buffer.from(text, 'utf8');
}

/** The JSON text of an outbound frame. */
export function frameText(frame: OutboundFrame): string {
  return typeof frame === 'string' ? frame : Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength).toString('utf8');
}

/** Serializes a JSON-RPC notification; used to build a fan-out frame once for many peers. */
export function notificationFrame(method: string, params: unknown): string {
  return `{"jsonrpc":"2.0","method":${JSON.stringify(method)},"params":${JSON.stringify(params)}}`;
}
