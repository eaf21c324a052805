import { AhpErrorCodes, type ResourceReadParams, type ResourceReadResult } from '../../protocol/index.js';
import { DomainError } from '../domain-error.js';
import type { MethodContext } from './method-registry.js';
import type { ProviderRegistry } from './provider-registry.js';

/** `resourceRead`: routed by URI scheme to a registered content provider; -32006 when none serves it. */
export async function resourceRead(params: ResourceReadParams, ctx: MethodContext, providers: ProviderRegistry): Promise<ResourceReadResult> {
  const provider = providers.contentProviderFor(params.uri);
  if (!provider) throw new DomainError(AhpErrorCodes.ContentNotFound, `no content at ${params.uri}`);
  return provider.read(params, ctx);
}
