export { createEndpointSecurity, endpointOfUrl, InsecureConfigurationError, type EndpointSecurity, type EndpointSecurityOptions } from './endpoint-security.js';
export { contentSecurityPolicy, securityHeaders } from './headers.js';
export { isLoopbackHost, isWildcardHost, urlHost } from './loopback.js';
export { normalizeOrigin, ownOrigins, type Endpoint } from './origins.js';
export { createStaticHandler, contentTypeOf, type StaticHandlerOptions } from './static-handler.js';
export { BEARER_PROTOCOL_PREFIX, selectProtocol } from './subprotocol.js';
export { generateToken, tokenProblem, tokensEqual, TOKEN_ENV } from './token.js';
export { createUpgradeCheck, presentedTokens, type UpgradeCheckOptions } from './upgrade-check.js';
