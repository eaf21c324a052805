import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the heap grow over what the last full collection found
 * live, in percent. V8's own factor (up to 4×) suits short programs; a server
 * that runs all day and records a turn every few seconds then holds a
 * growing pile of garbage between rare full collections, and its peak
 * memory climbs for hundreds of turns. At 20% a full collection (mostly
 * concurrent) comes every few dozen turns and the peak stays near what is
 * live (see the soak figures in docs/performance.md).
 */
const HEAP_GROWING_PERCENT = 20;

/** Applies {@link HEAP_GROWING_PERCENT} to this process: for long-running commands, not for a library's host. */
export function limitHeapGrowth(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
