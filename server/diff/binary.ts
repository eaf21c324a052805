/** git's binary test, shared by the file diff and the similarity score. */

/** git looks for a NUL byte in this many leading bytes to call a file binary. */
const BINARY_SNIFF_BYTES = 8000;

/** Whether content looks binary the way git decides it: a NUL byte in the first 8000 bytes. */
export function isBinary(content: Uint8Array): boolean {
  return content.subarray(0, BINARY_SNIFF_BYTES).includes(0);
}
