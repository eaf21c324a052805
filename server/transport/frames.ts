import type { Message } from 'vscode-jsonrpc/node';

/** JSON-RPC 2.0 error codes raised by the framing layer itself. */
const FramingErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
} as const;

/** JSON-RPC request id as it appears on the wire; `null` when none can be recovered. */
export type WireId = string | number | null;

/** Outcome of reading one inbound text frame. */
export type InboundFrame =
  | {
      /** The frame holds one well-formed JSON-RPC request, notification or response. */
      kind: 'message';
      /** The decoded message, handed on to the JSON-RPC connection. */
      message: Message;
    }
  | {
      /** The frame cannot be processed; the peer gets an error response. */
      kind: 'invalid';
      /** -32700 for text that is not JSON, -32600 for JSON that is not a JSON-RPC message. */
      code: number;
      /** Human-readable reason, sent as the error message. */
      reason: string;
      /** The request id when one could be read from the frame, else `null`. */
      id: WireId;
    };

/**
 * Decodes one text frame. Exactly one JSON-RPC message per frame is
 * accepted: batches (arrays) are refused because AHP never sends them.
 */
export function readFrame(text: string): InboundFrame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { kind: 'invalid', code: FramingErrorCode.ParseError, reason: `Parse error: ${(err as Error).message}`, id: null };
  }
  if (Array.isArray(value)) {
    return invalid('batch requests are not supported; send one JSON-RPC message per frame', null);
  }
  if (value === null || typeof value !== 'object') {
    return invalid('a JSON-RPC message must be a JSON object', null);
  }
  const record = value as Record<string, unknown>;
  const id = readId(record['id']);
  if (record['jsonrpc'] !== '2.0') {
    return invalid('"jsonrpc" must be "2.0"', id);
  }
  if ('method' in record) {
    if (typeof record['method'] !== 'string' || record['method'].length === 0) {
      return invalid('"method" must be a non-empty string', id);
    }
    if ('id' in record && (id === null || typeof record['id'] === 'boolean')) {
      return invalid('"id" must be a string or a number', null);
    }
    const params = record['params'];
    if (params !== undefined && (params === null || typeof params !== 'object')) {
      return invalid('"params" must be an object', id);
    }
    return { kind: 'message', message: record as unknown as Message };
  }
  if ('id' in record && ('result' in record || 'error' in record)) {
    return { kind: 'message', message: record as unknown as Message };
  }
  return invalid('not a JSON-RPC request, notification or response', id);
}

function invalid(reason: string, id: WireId): InboundFrame {
  return { kind: 'invalid', code: FramingErrorCode.InvalidRequest, reason, id };
}

function readId(value: unknown): WireId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) ? value : null;
}

/** Serializes a JSON-RPC error response. */
export function errorResponseFrame(id: WireId, code: number, message: string, data?: unknown): string {
  const error = data === undefined ? { code, message } : { code, message, data };
  return JSON.stringify({ jsonrpc: '2.0', id, error });
}
