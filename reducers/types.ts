/** Shapes shared by the per-channel reducers. */

/** An action whose `type` a reducer may not know; unknown types are no-ops. */
export interface UnknownAction {
  /** The action type. */
  readonly type: string;
}

/** Inputs a reducer takes besides state and action. */
export interface ReduceOptions {
  /** Clock for `modifiedAt` stamps, in epoch milliseconds; defaults to `Date.now`. */
  now?: () => number;
}

/** ISO 8601 timestamp of the options' clock. */
export function stamp(options: ReduceOptions | undefined): string {
  return new Date((options?.now ?? Date.now)()).toISOString();
}
