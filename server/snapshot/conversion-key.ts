/**
 * The conversions besides line endings a path gets on the way in, as a
 * short key kept on its stat cache entry: a change of key re-reads the file.
 */
import { isUnsupportedEncoding, workingTreeEncoding, type WorkingTreeEncoding } from './content-conversion.js';
import type { PathAttributes } from './git-attributes.js';

/** What a conversion key says. */
export interface ConversionSpec {
  ident: boolean;
  encoding: WorkingTreeEncoding | undefined;
  /** A `working-tree-encoding` that is not converted. */
  unsupportedEncoding: string | undefined;
  /** A configured filter driver that is not run. */
  filter: string | undefined;
}

const parsed = new Map<string, ConversionSpec>();

/** The key for a path's attributes (`filter`: a configured driver other than LFS); undefined when there is nothing to do. */
export function conversionKey(attrs: PathAttributes, filter: string | undefined): string | undefined {
  const enc = attrs['working-tree-encoding'];
  const spec: ConversionSpec = {
    ident: attrs.ident === true,
    encoding: workingTreeEncoding(enc),
    unsupportedEncoding: isUnsupportedEncoding(enc) ? (enc as string) : undefined,
    filter,
  };
  if (!spec.ident && !spec.encoding && spec.unsupportedEncoding === undefined && spec.filter === undefined) return undefined;
  const key = JSON.stringify([spec.ident, spec.encoding ?? null, spec.unsupportedEncoding ?? null, spec.filter ?? null]);
  if (!parsed.has(key)) parsed.set(key, spec);
  return key;
}

/** The spec of a key made by {@link conversionKey}. */
export function parseConversionKey(key: string): ConversionSpec {
  let spec = parsed.get(key);
  if (!spec) {
    const [ident, encoding, unsupportedEncoding, filter] = JSON.parse(key) as [boolean, WorkingTreeEncoding | null, string | null, string | null];
    spec = { ident, encoding: encoding ?? undefined, unsupportedEncoding: unsupportedEncoding ?? undefined, filter: filter ?? undefined };
    parsed.set(key, spec);
  }
  return spec;
}
