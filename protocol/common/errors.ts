/**
 * JSON-RPC and AHP error codes (AHP's `errors.schema.json`, pinned in `test/fixtures/ahp/schema/`,
 * `JsonRpcErrorCode` and `AhpErrorCode`).
 */

/** Standard JSON-RPC 2.0 error codes. */
export const JsonRpcErrorCodes = {
  /** The message was not valid JSON. */
  ParseError: -32700,
  /** The message was JSON but not a valid JSON-RPC request. */
  InvalidRequest: -32600,
  /** The method is unknown to the receiver. */
  MethodNotFound: -32601,
  /** The method's params failed validation. */
  InvalidParams: -32602,
  /** The receiver failed while handling a valid request. */
  InternalError: -32603,
} as const;

/** One of the standard JSON-RPC 2.0 error codes. */
export type JsonRpcErrorCode = (typeof JsonRpcErrorCodes)[keyof typeof JsonRpcErrorCodes];

/** AHP application error codes (the `-32000` to `-32099` range), as listed by AHP 0.6. */
export const AhpErrorCodes = {
  /** The referenced session URI does not exist. */
  SessionNotFound: -32001,
  /** The requested agent provider is not registered. */
  ProviderNotFound: -32002,
  /** A session with the given URI already exists. */
  SessionAlreadyExists: -32003,
  /** The operation requires no active turn, but one is in progress. */
  TurnInProgress: -32004,
  /** None of the offered protocol versions is supported; `data` lists the supported ones. */
  UnsupportedProtocolVersion: -32005,
  /** The requested content URI does not exist. */
  ContentNotFound: -32006,
  /** The client must authenticate for a protected resource first. */
  AuthRequired: -32007,
  /** The requested file, folder or URI does not exist. */
  NotFound: -32008,
  /** The client may not access the requested resource (e.g. a path outside the working directory). */
  PermissionDenied: -32009,
  /** The target already exists and the operation does not overwrite. */
  AlreadyExists: -32010,
} as const;

/** One of the AHP application error codes. */
export type AhpErrorCode = (typeof AhpErrorCodes)[keyof typeof AhpErrorCodes];

/** Any error code this server sends. */
export type ErrorCode = JsonRpcErrorCode | AhpErrorCode;

/** The `data` of an `UnsupportedProtocolVersion` (-32005) error. */
export interface UnsupportedProtocolVersionErrorData {
  /** Protocol versions (or SemVer ranges) the server is willing to speak. */
  supportedVersions: string[];
}

/** The `data` of a `PermissionDenied` (-32009) error. */
export interface PermissionDeniedErrorData {
  /** Access that, if granted via `resourceRequest`, would unlock the operation; we never offer one. */
  request?: { [key: string]: unknown };
}

/** A JSON-RPC error object as sent in an error response. */
export interface JsonRpcError {
  /** The error code. */
  code: number;
  /** Human-readable, precise description of what was wrong. */
  message: string;
  /** Optional structured detail, typed per code by AHP for some codes. */
  data?: unknown;
}
