import { AhpErrorCodes, JsonRpcErrorCodes } from '../../protocol/index.js';
import { DomainError } from '../domain-error.js';

/** Why a session refused a request. */
export type SessionErrorReason = 'invalid' | 'not-found' | 'conflict' | 'ended';

/** A request a session cannot carry out: clients get SessionNotFound for what does not exist, invalid params otherwise. */
export class SessionError extends DomainError {
  constructor(
    readonly reason: SessionErrorReason,
    message: string,
  ) {
    super(reason === 'not-found' ? AhpErrorCodes.SessionNotFound : JsonRpcErrorCodes.InvalidParams, message);
  }
}
