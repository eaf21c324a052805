/**
 * Bounds the transport enforces on every WebSocket connection. They protect
 * the server (and every other client) from one peer that sends too much,
 * sends garbage, or stops reading.
 */
export interface TransportLimits {
  /** Largest inbound frame accepted, in bytes. A bigger frame closes the connection with 1009. */
  maxFrameBytes: number;
  /** Largest amount of outbound data allowed to queue for one peer, in bytes; beyond it the peer is disconnected with 1013. */
  maxOutboundBufferBytes: number;
  /** Number of consecutive unusable frames (bad JSON, not JSON-RPC) tolerated before the connection is closed with 1008. */
  maxConsecutiveBadFrames: number;
}

const DEFAULT_TRANSPORT_LIMITS: Readonly<TransportLimits> = Object.freeze({
  maxFrameBytes: 4 * 1024 * 1024,
  maxOutboundBufferBytes: 8 * 1024 * 1024,
  maxConsecutiveBadFrames: 16,
});

/** Merges caller overrides onto the defaults, refusing values that would disable a bound. */
export function resolveTransportLimits(overrides: Partial<TransportLimits> = {}): TransportLimits {
  const limits = { ...DEFAULT_TRANSPORT_LIMITS, ...stripUndefined(overrides) };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isInteger(value) || value <= 0) {
      throw new RangeError(`transport limit ${name} must be a positive integer, got ${String(value)}`);
    }
  }
  return limits;
}

function stripUndefined<T extends object>(value: Partial<T>): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** WebSocket close codes (RFC 6455 §7.4.1) the server uses, by meaning. */
export const CloseCode = {
  /** The server is shutting down. */
  GoingAway: 1001,
  /** The peer sent a binary frame; AHP messages are text frames only. */
  UnsupportedData: 1003,
  /** The peer kept sending frames that are not JSON-RPC. */
  PolicyViolation: 1008,
  /** The peer sent a frame larger than `maxFrameBytes`. */
  MessageTooBig: 1009,
  /** The peer stopped reading and its outbound buffer passed `maxOutboundBufferBytes`. */
  TryAgainLater: 1013,
} as const;
