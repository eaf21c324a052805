export { createEndpointSecurity, endpointOfUrl, type EndpointSecurity, type EndpointSecurityOptions } from './endpoint-security.js';
export { TOKEN_ENV } from './token.js';
