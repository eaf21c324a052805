/**
 * Single-key shortcuts: `j` / `k` next / previous file, `v` toggles
 * "Viewed" on the selected file, `u` / `s` unified / side-by-side. They are
 * ignored while typing in a field, with a modifier held, or while a dialog
 * is open, so they never steal keys meant for something else.
 */
import type { App } from './app.js';

/** Whether a key event is meant for a field being typed in. */
export function typing(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  if (target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement) return true;
  return target instanceof HTMLInputElement && !['checkbox', 'radio', 'button'].includes(target.type);
}

/** Installs the shortcuts on the document. */
export function installKeyboard(app: App): void {
  document.addEventListener('keydown', (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(event.target) || document.querySelector('dialog[open]')) return;
    switch (event.key) {
      case 'j':
        app.step(1);
        break;
      case 'k':
        app.step(-1);
        break;
      case 'v': {
        const file = app.selectedFile;
        if (!file) return;
        app.setViewed(file.id, file.reviewed !== true);
        break;
      }
      case 'u':
        app.display.setMode('unified');
        break;
      case 's':
        app.display.setMode('split');
        break;
      default:
        return;
    }
    event.preventDefault();
  });
}
