/**
 * How much an import accepts from a mirror, and the error it stops with.
 * A mirror is someone else's data: a 1 GiB file of zeros packs into about
 * 1 MB, so sizes are checked as objects inflate, never after.
 */
import { DEFAULT_NON_REPO_MAX_FILE_BYTES } from '../snapshot/index.js';

/** The remote or its contents do not allow an import (exit code 1, with this message). */
export class ImportError extends Error {}

/** The error refusing a mirror's contents; `detail` says what is wrong, in the user's terms. */
export function refusedImport(detail: string): ImportError {
  return new ImportError(`refused, nothing was imported: ${detail}`);
}

/** Limits on what one import takes in. */
export interface ImportLimits {
  /** Largest object (a file's content, a tree, a checkpoint) in bytes once inflated. */
  maxObjectBytes: number;
  /** Largest total: bytes received, and bytes of every object inflated, each counted on its own. */
  maxTotalBytes: number;
}

/** The recorder's size limit for one file (what it records outside repositories), and the store's default budget. */
export const DEFAULT_IMPORT_LIMITS: ImportLimits = {
  maxObjectBytes: DEFAULT_NON_REPO_MAX_FILE_BYTES,
  maxTotalBytes: 2 * 1024 ** 3,
};

/** A byte count for people: `1.0 GiB (1073741824 bytes)`. */
export function describeBytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let i = 0;
  while (value >= 1024 && i < units.length - 1) {
    value /= 1024;
    i++;
  }
  return i === 0 ? `${n} bytes` : `${value.toFixed(1)} ${units[i]} (${n} bytes)`;
}
