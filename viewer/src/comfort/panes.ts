/**
 * Pane comfort: the sidebar and the file list can be resized (drag the
 * divider, or focus it and use the arrow keys) and hidden, and the widths
 * are remembered; a diff pane too narrow for two columns of code draws side
 * by side as unified until it is wide enough again.
 */
import type { App } from '../app.js';
import { byId, h } from '../dom.js';
import { loadNumber, loadPreference, savePreference } from '../preferences.js';

/** Below this diff-pane width (CSS pixels) side by side shows one word per line: it draws unified instead. */
const SPLIT_MIN_WIDTH = 700;

interface PaneSpec {
  /** The element resized. */
  pane: HTMLElement;
  /** Its CSS width variable on the root element. */
  variable: string;
  /** Preference names. */
  name: string;
  label: string;
  min: number;
  max: number;
  initial: number;
}

function splitter(spec: PaneSpec): HTMLElement {
  const root = document.documentElement;
  let width = loadNumber(`${spec.name}-width`, spec.min, spec.max, spec.initial);
  const set = (next: number): void => {
    width = Math.round(Math.min(spec.max, Math.max(spec.min, next)));
    root.style.setProperty(spec.variable, `${width}px`);
    bar.setAttribute('aria-valuenow', String(width));
  };
  const bar = h('div', {
    class: 'splitter',
    role: 'separator',
    tabindex: '0',
    'aria-orientation': 'vertical',
    'aria-label': `Resize ${spec.label}`,
    'aria-valuemin': String(spec.min),
    'aria-valuemax': String(spec.max),
    'data-splitter': spec.name,
    title: `Drag to resize ${spec.label}`,
  });
  set(width);
  bar.addEventListener('pointerdown', (down) => {
    down.preventDefault();
    bar.setPointerCapture(down.pointerId);
    const startX = down.clientX;
    const startWidth = width;
    const move = (event: PointerEvent): void => set(startWidth + event.clientX - startX);
    const up = (): void => {
      bar.removeEventListener('pointermove', move);
      savePreference(`${spec.name}-width`, width);
    };
    bar.addEventListener('pointermove', move);
    bar.addEventListener('pointerup', up, { once: true });
  });
  bar.addEventListener('keydown', (event) => {
    const step = event.shiftKey ? 50 : 10;
    if (event.key === 'ArrowLeft') set(width - step);
    else if (event.key === 'ArrowRight') set(width + step);
    else return;
    event.preventDefault();
    savePreference(`${spec.name}-width`, width);
  });
  return bar;
}

function collapseToggle(name: string, label: string, bodyClass: string): HTMLElement {
  let hidden = loadPreference(`${name}-hidden`, ['yes', 'no'], 'no') === 'yes';
  const button = h(
    'button',
    { type: 'button', class: 'pane-toggle', 'data-toggle': name, 'aria-pressed': String(!hidden), title: `Show or hide ${label}` },
    label,
  );
  const apply = (): void => {
    document.body.classList.toggle(bodyClass, hidden);
    button.setAttribute('aria-pressed', String(!hidden));
  };
  button.addEventListener('click', () => {
    hidden = !hidden;
    savePreference(`${name}-hidden`, hidden ? 'yes' : 'no');
    apply();
  });
  apply();
  return button;
}

/** Adds the dividers and the show / hide toggles, and watches the diff pane's width. */
export function installPanes(app: App): HTMLElement {
  const sidebar = document.querySelector<HTMLElement>('.sidebar')!;
  const files = byId('files-column');
  sidebar.after(splitter({ pane: sidebar, variable: '--sidebar-width', name: 'sidebar', label: 'the sessions and turns', min: 160, max: 640, initial: 300 }));
  files.after(splitter({ pane: files, variable: '--files-width', name: 'files', label: 'the file list', min: 180, max: 720, initial: 340 }));
  new ResizeObserver(([entry]) => {
    const narrow = (entry?.contentRect.width ?? Infinity) < SPLIT_MIN_WIDTH;
    if (narrow === app.display.narrow) return;
    app.display.narrow = narrow;
    app.invalidate('toolbar', 'diff');
  }).observe(byId('diff'));
  return h(
    'span',
    { class: 'pane-toggles', role: 'group', 'aria-label': 'Panes' },
    collapseToggle('sidebar', 'Sessions', 'sidebar-hidden'),
    collapseToggle('files', 'Files', 'files-hidden'),
  );
}
