import type { URI } from '../../protocol/index.js';
import type { ContentProvider } from '../method-table.js';
import type { SessionProvider } from './providers.js';

/** Holds the pluggable providers behind `listSessions`, `createSession`, `disposeSession` and `resourceRead`. */
export class ProviderRegistry {
  private sessionProvider: SessionProvider | undefined;
  private readonly content = new Map<string, ContentProvider>();

  /** The session provider, or undefined until one is registered. */
  get sessions(): SessionProvider | undefined {
    return this.sessionProvider;
  }

  /** Installs the session provider. Throws if one is already installed. */
  setSessionProvider(provider: SessionProvider): void {
    if (this.sessionProvider) throw new Error('a session provider is already registered');
    this.sessionProvider = provider;
  }

  /** Routes `resourceRead` for URIs of `scheme` (e.g. `changeset-content:`) to `provider`. */
  registerContentProvider(scheme: string, provider: ContentProvider): void {
    const key = normalizeScheme(scheme);
    if (this.content.has(key)) throw new Error(`a content provider for ${key} is already registered`);
    this.content.set(key, provider);
  }

  /** The content provider for a URI's scheme, or undefined. */
  contentProviderFor(uri: URI): ContentProvider | undefined {
    const colon = uri.indexOf(':');
    return colon <= 0 ? undefined : this.content.get(uri.slice(0, colon + 1).toLowerCase());
  }
}

function normalizeScheme(scheme: string): string {
  const lower = scheme.toLowerCase();
  return lower.endsWith(':') ? lower : `${lower}:`;
}
