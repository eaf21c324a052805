/**
 * Git's object encoding: the `<type> <size>\0` header, SHA-1 ids, and the
 * numeric type codes packs use.
 */
import { createHash } from 'node:crypto';
import { CorruptObjectError, StoreInputError } from './errors.js';
import type { ObjectType, StoredObject } from './types.js';

/** Every kind of object a git repository can hold. */
export type AnyObjectType = StoredObject['type'];

/** Pack type codes (pack-format.txt); 6 and 7 are the two delta kinds. */
export const PACK_TYPE_CODE: Readonly<Record<AnyObjectType, number>> = { commit: 1, tree: 2, blob: 3, tag: 4 };
export const PACK_OFS_DELTA = 6;
export const PACK_REF_DELTA = 7;

const TYPE_BY_CODE: readonly (AnyObjectType | undefined)[] = [undefined, 'commit', 'tree', 'blob', 'tag'];

/** The object type for a pack type code, or undefined for deltas and unknown codes. */
export function typeFromPackCode(code: number): AnyObjectType | undefined {
  return TYPE_BY_CODE[code];
}

/** The id of the empty tree, which git treats as always present (what `git write-tree` prints for an empty index). */
export const EMPTY_TREE_OID = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

const OID_PATTERN = /^[0-9a-f]{40}$/;

/** True for a full lowercase hexadecimal SHA-1 object id. */
export function isOid(value: unknown): value is string {
  return typeof value === 'string' && OID_PATTERN.test(value);
}

/** Throws a precise input error unless `value` is a full lowercase SHA-1 id. */
export function assertOid(value: unknown, what = 'object id'): asserts value is string {
  if (!isOid(value)) {
    throw new StoreInputError(`${what} must be 40 lowercase hex characters, got ${describeValue(value)}`);
  }
}

const WRITABLE_TYPES: ReadonlySet<string> = new Set<ObjectType>(['blob', 'tree', 'commit']);

/** Throws a precise input error unless `value` is an object type the store writes. */
export function assertWritableType(value: unknown): asserts value is ObjectType {
  if (typeof value !== 'string' || !WRITABLE_TYPES.has(value)) {
    throw new StoreInputError(`object type must be one of blob, tree, commit, got ${describeValue(value)}`);
  }
}

/** A short, safe rendering of an arbitrary value for error messages. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (value === null) return 'null';
  if (value instanceof Uint8Array) return `bytes(${value.byteLength})`;
  return typeof value;
}

/** The SHA-1 id git gives an object of this type and content. */
export function hashObject(type: AnyObjectType, content: Uint8Array): string {
  // A string header, not a Buffer: this runs once per file a snapshot hashes.
  return createHash('sha1').update(`${type} ${content.byteLength}\0`, 'latin1').update(content).digest('hex');
}

/** Splits an inflated loose object (header + content) and checks its declared size. */
export function parseLooseObject(inflated: Buffer, oid: string): StoredObject {
  const nul = inflated.indexOf(0);
  const space = inflated.indexOf(0x20);
  if (nul < 0 || space < 0 || space > nul) throw new CorruptObjectError(`loose object ${oid} has no valid header`);
  const type = inflated.toString('latin1', 0, space);
  const size = Number(inflated.toString('latin1', space + 1, nul));
  if (type !== 'blob' && type !== 'tree' && type !== 'commit' && type !== 'tag') {
    throw new CorruptObjectError(`loose object ${oid} has unknown type ${JSON.stringify(type)}`);
  }
  const content = inflated.subarray(nul + 1);
  if (content.byteLength !== size) {
    throw new CorruptObjectError(`loose object ${oid} declares ${size} bytes but holds ${content.byteLength}`);
  }
  return { type, content };
}
