/**
 * A file's path as a header shows it: its folders, which give way from the
 * left when the header is narrow ("…utils/"), and its name, which stays
 * whole. The text is the path as it is, so copying it or reading it aloud
 * gives the path.
 */
import { h } from './dom.js';

/** The folders (when there are any) and the name of a path, as two spans. */
export function pathLabel(path: string): HTMLElement[] {
  const cut = path.lastIndexOf('/') + 1;
  const name = h('span', { class: 'path-name' }, path.slice(cut));
  // Laid out right to left so the cut falls at the start; the folders themselves read left to right.
  return cut === 0 ? [name] : [h('span', { class: 'path-dir' }, h('bdi', {}, path.slice(0, cut))), name];
}
