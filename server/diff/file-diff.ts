/**
 * The diff of one file between two versions, as the changeset producers and
 * the viewer consume it: text hunks with counts, or why there are none
 * (binary, oversized).
 */
import { isUtf8 } from 'node:buffer';
import { isBinary } from './binary.js';
import { ByteLines, type LineEncoding } from '../../diff/byte-lines.js';
import type { BinaryFileDiff, DiffHunk, OversizedFileDiff, TextFileDiff, WorkspaceFileDiff } from '../../protocol/extensions/file-diff.js';
import { buildHunks, NO_NEWLINE_MARKER } from './hunks.js';
import { countLineChanges, diffLines, type DiffAlgorithm } from '../../diff/line-diff.js';

export { isBinary } from './binary.js';
export type { BinaryFileDiff, OversizedFileDiff, TextFileDiff, WorkspaceFileDiff };

/** Default size above which a file is not diffed at all. */
const DEFAULT_MAX_BYTES = 8 * 1024 * 1024;
/** Files up to this size are always diffed exactly, never replaced wholesale. */
const EXACT_DIFF_BYTES = 1024 * 1024;
/** Default bound on the lines between the common prefix and suffix of a file above `EXACT_DIFF_BYTES`. */
const DEFAULT_MAX_MIDDLE_LINES = 200_000;

/** Options of `diffFile`. */
export interface FileDiffOptions {
  /** Context lines around each change (default 3). */
  context?: number;
  /** Sides larger than this many bytes make the result `oversized` (default 8 MiB). */
  maxBytes?: number;
  /** Core algorithm (default `histogram`). */
  algorithm?: DiffAlgorithm;
  /** For files above 1 MiB only: more changed-region lines than this (both sides together) give a coarse replacement (default 200,000). */
  maxMiddleLines?: number;
}

/** Diffs one file between two versions; `undefined` means the file does not exist on that side. */
export function diffFile(before: Uint8Array | undefined, after: Uint8Array | undefined, options: FileDiffOptions = {}): WorkspaceFileDiff {
  checkSide('before', before);
  checkSide('after', after);
  if (before === undefined && after === undefined) throw new TypeError('diffFile: the file must exist on at least one side');
  const context = checkCount('context', options.context ?? 3);
  const maxBytes = checkCount('maxBytes', options.maxBytes ?? DEFAULT_MAX_BYTES);
  const maxMiddleLines = checkCount('maxMiddleLines', options.maxMiddleLines ?? DEFAULT_MAX_MIDDLE_LINES);
  const algorithm = options.algorithm ?? 'histogram';
  if (algorithm !== 'histogram' && algorithm !== 'myers') {
    throw new TypeError(`diffFile: algorithm must be 'histogram' or 'myers', got ${String(algorithm)}`);
  }

  const exists = { before: before !== undefined, after: after !== undefined };
  const sizes = {
    ...(before !== undefined ? { beforeSize: before.length } : {}),
    ...(after !== undefined ? { afterSize: after.length } : {}),
  };
  if ((before && isBinary(before)) || (after && isBinary(after))) return { kind: 'binary', ...exists, ...sizes };
  if ((before?.length ?? 0) > maxBytes || (after?.length ?? 0) > maxBytes) {
    return { kind: 'oversized', ...exists, ...sizes, limit: maxBytes };
  }

  const oldBytes = before ?? new Uint8Array(0);
  const newBytes = after ?? new Uint8Array(0);
  const encoding: LineEncoding = isUtf8(oldBytes) && isUtf8(newBytes) ? 'utf-8' : 'latin1';
  const oldLines = new ByteLines(oldBytes, encoding);
  const newLines = new ByteLines(newBytes, encoding);

  const large = Math.max(oldBytes.length, newBytes.length) > EXACT_DIFF_BYTES;
  if (large && middleLineCount(oldLines, newLines) > maxMiddleLines) {
    return { kind: 'text', ...exists, coarse: true, ...coarseReplacement(oldLines, newLines), encoding };
  }
  const changes = diffLines(oldLines, newLines, { algorithm });
  const { added, removed } = countLineChanges(changes);
  return { kind: 'text', ...exists, coarse: false, added, removed, hunks: buildHunks(oldLines, newLines, changes, context), encoding };
}

function checkSide(name: string, value: unknown): void {
  if (value !== undefined && !(value instanceof Uint8Array)) {
    throw new TypeError(`diffFile: ${name} must be a Uint8Array or undefined`);
  }
}

function checkCount(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`diffFile: ${name} must be a non-negative integer, got ${String(value)}`);
  }
  return value;
}

/** Lines left on both sides after removing the common leading and trailing lines (compared as bytes). */
function middleLineCount(a: ByteLines, b: ByteLines): number {
  const same = (i: number, j: number): boolean => {
    const s1 = a.starts[i] as number;
    const s2 = b.starts[j] as number;
    const n = (a.starts[i + 1] as number) - s1;
    if ((b.starts[j + 1] as number) - s2 !== n) return false;
    for (let k = 0; k < n; k++) if (a.bytes[s1 + k] !== b.bytes[s2 + k]) return false;
    return true;
  };
  const lim = Math.min(a.length, b.length);
  let pre = 0;
  while (pre < lim && same(pre, pre)) pre++;
  let suf = 0;
  while (suf < lim - pre && same(a.length - 1 - suf, b.length - 1 - suf)) suf++;
  return a.length + b.length - 2 * (pre + suf);
}

/** One hunk replacing every old line with every new line. */
function coarseReplacement(a: ByteLines, b: ByteLines): { added: number; removed: number; hunks: DiffHunk[] } {
  const lines: string[] = [];
  const push = (prefix: string, texts: string[]): void => {
    for (const t of texts) {
      if (t.endsWith('\n')) lines.push(prefix + t.slice(0, -1));
      else lines.push(prefix + t, NO_NEWLINE_MARKER);
    }
  };
  push('-', a.texts(0, a.length));
  push('+', b.texts(0, b.length));
  const hunks = a.length + b.length === 0 ? [] : [{ oldStart: 1, oldLines: a.length, newStart: 1, newLines: b.length, lines }];
  return { added: b.length, removed: a.length, hunks };
}
