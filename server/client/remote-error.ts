/** A JSON-RPC error answered by the server. */
export class RemoteError extends Error {
  constructor(
    /** The method that failed. */
    readonly method: string,
    /** The JSON-RPC error code. */
    readonly code: number,
    message: string,
    /** The error's structured detail (e.g. the conflicts of a refused operation). */
    readonly data?: unknown,
  ) {
    super(message);
  }
}
