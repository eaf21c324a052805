/** The AHP version this server implements, offered in `InitializeResult.protocolVersion`. */
export const AHP_PROTOCOL_VERSION = '0.6.0';
