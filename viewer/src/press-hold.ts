/**
 * A click survives a redraw. The page draws by rebuilding what changed, and
 * a redraw between the mouse button going down on a control and coming up
 * replaces the element pressed: the browser then fires no click at all (the
 * button came up on another element), and the reader's click is lost. So
 * while the button is down on something clickable, drawing waits until the
 * click has been dispatched (at most a second). A press on anything else
 * (selecting text, dragging a scrollbar or a pane's edge) holds nothing.
 */

/** What a click acts on: controls, and line numbers (links to their line). */
const CLICKABLE = 'button, input, select, label, summary, a, [data-line]';
/** The longest a button held down holds drawing. */
const MAX_HOLD_MS = 1000;

let pressed = false;
let presses = 0;
let waiting: (() => void)[] = [];

function release(): void {
  if (!pressed) return;
  pressed = false;
  const due = waiting;
  waiting = [];
  for (const draw of due) draw();
}

/** Watches the mouse button for the whole page (once, at start). */
export function installPressHold(): void {
  window.addEventListener(
    'pointerdown',
    (event) => {
      if (event.button !== 0 || !(event.target instanceof Element) || !event.target.closest(CLICKABLE)) return;
      pressed = true;
      const press = ++presses;
      setTimeout(() => press === presses && release(), MAX_HOLD_MS);
      const up = (): void => {
        window.removeEventListener('pointerup', up, true);
        window.removeEventListener('pointercancel', up, true);
        // The click is dispatched right after the button comes up, in the same task: draw after it.
        setTimeout(() => press === presses && release(), 0);
      };
      window.addEventListener('pointerup', up, true);
      window.addEventListener('pointercancel', up, true);
    },
    true,
  );
}

/** While a pressed control holds drawing, keeps `draw` for when its click is dispatched and returns true; false: draw now. */
export function heldByPress(draw: () => void): boolean {
  if (!pressed) return false;
  waiting.push(draw);
  return true;
}
