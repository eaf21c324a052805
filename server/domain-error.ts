/**
 * Errors a request ends with, raised where the problem is found (a session,
 * an operation, a channel) and answered by `connection/`, which turns each
 * into the JSON-RPC error response `{ code, message, data }`. The code is
 * AHP's (or JSON-RPC's) for the case, so every layer names failures the way
 * clients read them without depending on the transport.
 */
import { AhpErrorCodes, JsonRpcErrorCodes, type ErrorCode } from '../protocol/index.js';

export class DomainError extends Error {
  constructor(
    /** The AHP or JSON-RPC error code clients receive. */
    readonly code: ErrorCode,
    message: string,
    /** Structured detail sent as the error's `data`. */
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** -32602: a param is missing or wrong; `message` names the field. */
export function invalidParams(message: string): DomainError {
  return new DomainError(JsonRpcErrorCodes.InvalidParams, message);
}

/** -32600: the request is not valid in the connection's current state. */
export function invalidRequest(message: string): DomainError {
  return new DomainError(JsonRpcErrorCodes.InvalidRequest, message);
}

/** -32008: the URI names nothing this server has. */
export function notFound(message: string): DomainError {
  return new DomainError(AhpErrorCodes.NotFound, message);
}

/** -32603: the server failed while handling a valid request. */
export function internalError(message: string): DomainError {
  return new DomainError(JsonRpcErrorCodes.InternalError, message);
}
