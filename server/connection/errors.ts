import { ResponseError } from 'vscode-jsonrpc/node';
import { JsonRpcErrorCodes } from '../../protocol/index.js';
import { DomainError, internalError } from '../domain-error.js';

/** -32601: the method is not served. */
export function methodNotFound(method: string, detail?: string): DomainError {
  return new DomainError(JsonRpcErrorCodes.MethodNotFound, detail ?? `unknown method "${method}"`);
}

/**
 * The JSON-RPC error response for what a handler threw: a domain error with
 * its own code, anything else an internal error naming the method (the
 * handler's failure is logged by the caller).
 */
export function toResponseError(method: string, error: unknown): ResponseError<unknown> {
  const domain = error instanceof DomainError ? error : internalError(`"${method}" failed: ${error instanceof Error ? error.message : String(error)}`);
  return new ResponseError(domain.code, domain.message, domain.data);
}
