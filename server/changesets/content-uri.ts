/**
 * Content URIs of changeset files: `ahp-changeset-content:/<session>/<root>/<oid>`.
 * They name an object in one working directory's store; `resourceRead`
 * serves them only when a changeset of that session has handed them out.
 */

/** URI scheme of changeset file contents. */
export const CONTENT_SCHEME = 'ahp-changeset-content:';

/** The parts of a content URI. */
export interface ContentAddress {
  sessionId: string;
  /** Working-directory index whose store holds the object. */
  root: number;
  /** Object id. */
  oid: string;
}

export function contentUri(address: ContentAddress): string {
  return `${CONTENT_SCHEME}/${encodeURIComponent(address.sessionId)}/${address.root}/${address.oid}`;
}

export function parseContentUri(uri: string): ContentAddress | undefined {
  const match = /^ahp-changeset-content:\/([^/?#]+)\/(0|[1-9]\d{0,3})\/([0-9a-f]{40})$/.exec(uri);
  if (!match) return undefined;
  try {
    return { sessionId: decodeURIComponent(match[1]!), root: Number(match[2]), oid: match[3]! };
  } catch {
    return undefined;
  }
}
