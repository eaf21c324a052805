/** JSON-RPC 2.0 message shapes as they appear on the wire. */

import type { JsonRpcError } from './errors.js';

/** A request id. */
export type JsonRpcId = number | string;

/** A request: expects exactly one response with the same id. */
export interface JsonRpcRequest<P = unknown> {
  /** Always `2.0`. */
  jsonrpc: '2.0';
  /** Correlates the response. */
  id: JsonRpcId;
  /** Method name. */
  method: string;
  /** Method params. */
  params?: P;
}

/** A notification: no id, never answered. */
export interface JsonRpcNotification<P = unknown> {
  /** Always `2.0`. */
  jsonrpc: '2.0';
  /** Method name. */
  method: string;
  /** Method params. */
  params?: P;
}

/** A success response. */
export interface JsonRpcSuccessResponse<R = unknown> {
  /** Always `2.0`. */
  jsonrpc: '2.0';
  /** The request's id. */
  id: JsonRpcId;
  /** The method's result (`null` for methods without data). */
  result: R;
}

/** An error response. */
export interface JsonRpcErrorResponse {
  /** Always `2.0`. */
  jsonrpc: '2.0';
  /** The request's id, or `null` when it could not be read. */
  id: JsonRpcId | null;
  /** What went wrong. */
  error: JsonRpcError;
}

/** Any JSON-RPC message. */
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcSuccessResponse | JsonRpcErrorResponse;
