import { ResponseError } from 'vscode-jsonrpc/node';
import { AhpErrorCodes, JsonRpcErrorCodes } from '../../protocol/index.js';

/**
 * A JSON-RPC error a method handler throws to answer a request with
 * `{ code, message, data }` instead of a result.
 */
export class RpcError extends ResponseError<unknown> {
  constructor(code: number, message: string, data?: unknown) {
    super(code, message, data);
  }
}

/** -32602: a param is missing or wrong; `message` names the field. */
export function invalidParams(message: string): RpcError {
  return new RpcError(JsonRpcErrorCodes.InvalidParams, message);
}

/** -32600: the request is not valid in the connection's current state. */
export function invalidRequest(message: string): RpcError {
  return new RpcError(JsonRpcErrorCodes.InvalidRequest, message);
}

/** -32601: the method is not served. */
export function methodNotFound(method: string, detail?: string): RpcError {
  return new RpcError(JsonRpcErrorCodes.MethodNotFound, detail ?? `unknown method "${method}"`);
}

/** -32008: the URI names nothing this server has. */
export function notFound(message: string): RpcError {
  return new RpcError(AhpErrorCodes.NotFound, message);
}

/** -32603: the server failed while handling a valid request. */
export function internalError(message: string): RpcError {
  return new RpcError(JsonRpcErrorCodes.InternalError, message);
}
