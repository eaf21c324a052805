/**
 * Light or dark: the system preference by default, or the reader's choice,
 * remembered. The choice is an attribute on the root element that the
 * stylesheet's colour variables key on.
 */
import { h } from '../dom.js';
import { loadPreference, savePreference } from '../preferences.js';

/** The reader's choice. */
export type Theme = 'system' | 'light' | 'dark';

const THEMES: [Theme, string][] = [
  ['system', 'System theme'],
  ['light', 'Light'],
  ['dark', 'Dark'],
];

/** Applies a theme to the page. */
function applyTheme(theme: Theme): void {
  if (theme === 'system') delete document.documentElement.dataset['theme'];
  else document.documentElement.dataset['theme'] = theme;
}

/** Applies the remembered theme and returns the control that changes it. */
export function themeControl(): HTMLElement {
  const current = loadPreference<Theme>('theme', ['system', 'light', 'dark'], 'system');
  applyTheme(current);
  const select = h(
    'select',
    {
      id: 'theme',
      'aria-label': 'Colour theme',
      title: 'Colour theme (the system preference unless chosen)',
      onchange: () => {
        const theme = select.value as Theme;
        applyTheme(theme);
        savePreference('theme', theme);
      },
    },
    THEMES.map(([value, label]) => h('option', { value, selected: value === current }, label)),
  );
  return select;
}
