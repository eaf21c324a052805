/**
 * highlight.js returns HTML: escaped text inside `<span class="hljs-…">`
 * elements, nothing else. This turns it back into text runs with their
 * class, one list per line, so the page builds its own text nodes and never
 * parses HTML. A run inside nested spans takes the innermost span's class.
 */
import type { Token } from '../code-cell.js';

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#x27;': "'", '&#39;': "'" };

/** Per-line tokens of highlight.js output (covering every character of each line). */
export function tokensOfHtml(html: string): Token[][] {
  const lines: Token[][] = [[]];
  const classes: string[] = [];
  let column = 0;
  const addText = (text: string): void => {
    const className = classes[classes.length - 1] ?? '';
    const parts = text.split('\n');
    parts.forEach((part, i) => {
      if (i > 0) {
        lines.push([]);
        column = 0;
      }
      if (part.length === 0) return;
      const line = lines[lines.length - 1]!;
      const last = line[line.length - 1];
      if (last && last.className === className && last.end === column) last.end += part.length;
      else line.push({ start: column, end: column + part.length, className });
      column += part.length;
    });
  };
  const tag = /<span class="([^"]*)">|<\/span>|&(?:amp|lt|gt|quot|#x27|#39);/g;
  let at = 0;
  for (let m = tag.exec(html); m; m = tag.exec(html)) {
    if (m.index > at) addText(html.slice(at, m.index));
    if (m[0] === '</span>') classes.pop();
    else if (m[1] !== undefined) classes.push(m[1]);
    else addText(ENTITIES[m[0]]!);
    at = tag.lastIndex;
  }
  if (at < html.length) addText(html.slice(at));
  return lines;
}
