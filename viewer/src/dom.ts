/**
 * A tiny DOM builder. Everything the page shows is built with
 * `createElement` and `textContent`, never HTML strings, so file paths,
 * turn messages and diff lines cannot inject markup; and no inline styles,
 * which the page's Content-Security-Policy forbids (sizes and offsets are
 * set through the CSSOM, which it allows).
 */

/** Attributes and properties accepted by {@link h}. */
export interface Props {
  /** CSS classes (falsy entries are skipped). */
  class?: string | (string | false | undefined)[];
  /** Click handler. */
  onclick?: (event: MouseEvent) => void;
  /** Change handler (checkboxes, selects). */
  onchange?: (event: Event) => void;
  /** Any other attribute; `true` sets it empty, `false`/`undefined` leaves it out. */
  [attribute: string]: unknown;
}

/** Anything {@link h} accepts as a child. */
export type Child = Node | string | number | false | null | undefined | Child[];

/** Creates an element with attributes and children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === false || value === null) continue;
    if (key === 'class') {
      const classes = Array.isArray(value) ? value.filter(Boolean).join(' ') : String(value);
      if (classes) el.className = classes;
    } else if (key === 'onclick') el.addEventListener('click', value as (e: Event) => void);
    else if (key === 'onchange') el.addEventListener('change', value as (e: Event) => void);
    else if (key === 'checked') (el as unknown as HTMLInputElement).checked = Boolean(value);
    else if (key === 'disabled') (el as unknown as HTMLButtonElement).disabled = Boolean(value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/**
 * Replaces a container's children, keeping keyboard focus: when the focused
 * element carried a `data-focus-key`, the new element with the same key is
 * focused again, so re-rendering a list under the user's cursor does not
 * throw them out of it.
 */
export function replaceChildren(container: Element, ...children: Child[]): void {
  const active = document.activeElement;
  const key = active instanceof HTMLElement && container.contains(active) ? active.dataset['focusKey'] : undefined;
  const fragment = document.createDocumentFragment();
  append(fragment, children);
  container.replaceChildren(fragment);
  if (key !== undefined) {
    const again = [...container.querySelectorAll<HTMLElement>('[data-focus-key]')].find((el) => el.dataset['focusKey'] === key);
    again?.focus({ preventScroll: true });
  }
}

/** Runs `task` once the next frame has been painted. */
export function afterPaint(task: () => void): void {
  requestAnimationFrame(() => setTimeout(task, 0));
}

/** The element with this id; throws when the page skeleton lacks it (a build mistake). */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the page has no #${id}`);
  return el as T;
}

/** A short relative or absolute time for a timestamp. */
export function formatTime(iso: string | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const sameDay = date.toDateString() === new Date().toDateString();
  return (sameDay ? TIME : DATE_TIME).format(date);
}

// Built once: a locale formatter costs milliseconds to create, and lists format many times.
const TIME = new Intl.DateTimeFormat([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const DATE_TIME = new Intl.DateTimeFormat([], { dateStyle: 'short', timeStyle: 'medium' });

/** A duration in milliseconds, shortly. */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** Text of a `StringOrMarkdown` (Markdown is shown as its source: the page renders no HTML from the server). */
export function plainText(value: string | { markdown: string } | undefined): string {
  if (value === undefined) return '';
  return typeof value === 'string' ? value : value.markdown;
}
