/** Display preferences kept across visits in local storage (layout, theme, pane sizes); never anything from the server. */

const PREFIX = 'changeset-server.';

/** A remembered choice among `allowed`, or `fallback`. */
export function loadPreference<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
  try {
    const value = localStorage.getItem(PREFIX + name);
    return value !== null && (allowed as readonly string[]).includes(value) ? (value as T) : fallback;
  } catch {
    return fallback;
  }
}

/** A remembered number within bounds, or `fallback`. */
export function loadNumber(name: string, min: number, max: number, fallback: number): number {
  try {
    const value = Number(localStorage.getItem(PREFIX + name));
    return Number.isFinite(value) && value >= min && value <= max && value !== 0 ? value : fallback;
  } catch {
    return fallback;
  }
}

/** Remembers a choice (storage may be unavailable; the choice then lasts for the page). */
export function savePreference(name: string, value: string | number): void {
  try {
    localStorage.setItem(PREFIX + name, String(value));
  } catch {
    // Private windows may refuse storage.
  }
}
