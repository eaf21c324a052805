/** This server's own session method, beside AHP's `createSession` and `disposeSession`. Not part of AHP. */

/** Params of `forgetSession`: removes a session and its history from the stores for good. */
export interface ForgetSessionParams {
  /** The session URI (`ahp-session:/<id>`). */
  channel: string;
}

/** Result of `forgetSession`: null once the session is gone. */
export type ForgetSessionResult = null;
