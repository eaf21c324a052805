/**
 * The highlighting worker: highlight.js runs here, off the page's thread,
 * so a 10,000-line file never stalls scrolling. It loads each grammar the
 * first time it is asked for and answers with per-line tokens.
 */
import hljs from 'highlight.js/lib/core';
import type { Token } from '../code-cell.js';
import { GRAMMARS } from './grammars.js';
import { tokensOfHtml } from './html-tokens.js';

/** A request: texts (one per diff side) in one language. */
export interface HighlightRequest {
  id: number;
  language: string;
  texts: string[];
}

/** The answer: per text, per line, its tokens (empty when the grammar is unknown or failed). */
export interface HighlightResponse {
  id: number;
  tokens: Token[][][];
}

const loading = new Map<string, Promise<boolean>>();

function ensure(language: string): Promise<boolean> {
  let ready = loading.get(language);
  if (!ready) {
    const load = GRAMMARS[language];
    ready = load
      ? load().then(
          (m) => (hljs.registerLanguage(language, m.default), true),
          () => false,
        )
      : Promise.resolve(false);
    loading.set(language, ready);
  }
  return ready;
}

const scope = globalThis as unknown as { onmessage: ((event: { data: HighlightRequest }) => void) | null; postMessage(message: HighlightResponse): void };

scope.onmessage = (event) => {
  const { id, language, texts } = event.data;
  void ensure(language).then((ok) => {
    const tokens = texts.map((text) => {
      if (!ok) return [];
      try {
        return tokensOfHtml(hljs.highlight(text, { language, ignoreIllegals: true }).value);
      } catch {
        return [];
      }
    });
    scope.postMessage({ id, tokens });
  });
};
