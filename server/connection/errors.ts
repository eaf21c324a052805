import { JsonRpcErrorCodes } from '../../protocol/index.js';
import { DomainError } from '../domain-error.js';

/** -32601: the method is not served. */
export function methodNotFound(method: string, detail?: string): DomainError {
  return new DomainError(JsonRpcErrorCodes.MethodNotFound, detail ?? `unknown method "${method}"`);
}
