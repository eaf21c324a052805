/**
 * Syntax highlighting of diff lines. The old side (context and removed
 * lines) and the new side (context and added lines) of a file's hunks are
 * highlighted as two texts in a worker; the tokens come back per line and
 * are attached to the lines, which the views draw under the word marks.
 * Without a worker (or for an unknown language) lines stay plain.
 */
import type { Token } from '../code-cell.js';
import type { DiffLine, HunkModel } from '../diff-model.js';
import { languageOf } from './languages.js';
import type { HighlightRequest, HighlightResponse } from './worker.js';

const tokens = new WeakMap<DiffLine, readonly Token[]>();
const started = new WeakSet<readonly HunkModel[]>();
const waiting = new Map<number, (response: HighlightResponse) => void>();
let worker: Worker | undefined | null;
let nextId = 1;

/** The tokens of a line, once highlighted. */
export function tokensOf(line: DiffLine): readonly Token[] | undefined {
  return tokens.get(line);
}

function getWorker(): Worker | null {
  if (worker !== undefined) return worker;
  try {
    worker = new Worker(new URL('./highlight-worker.js', import.meta.url), { type: 'module' });
    worker.onmessage = (event: MessageEvent<HighlightResponse>) => {
      waiting.get(event.data.id)?.(event.data);
      waiting.delete(event.data.id);
    };
    worker.onerror = () => {
      worker = null;
    };
  } catch {
    worker = null;
  }
  return worker;
}

/** Highlights a file's hunks once; resolves true when tokens were attached (the caller re-renders). */
export async function highlightHunks(path: string, hunks: readonly HunkModel[]): Promise<boolean> {
  const language = languageOf(path);
  if (!language || started.has(hunks)) return false;
  started.add(hunks);
  const target = getWorker();
  if (!target) return false;
  const oldSide: DiffLine[] = [];
  const newSide: DiffLine[] = [];
  for (const hunk of hunks) {
    for (const line of hunk.lines) {
      if (line.kind !== 'add') oldSide.push(line);
      if (line.kind !== 'del') newSide.push(line);
    }
  }
  const id = nextId++;
  const request: HighlightRequest = { id, language, texts: [oldSide.map((l) => l.text).join('\n'), newSide.map((l) => l.text).join('\n')] };
  const response = await new Promise<HighlightResponse>((resolve) => {
    waiting.set(id, resolve);
    target.postMessage(request);
  });
  const [oldTokens = [], newTokens = []] = response.tokens;
  oldSide.forEach((line, i) => {
    if (line.kind === 'del' && oldTokens[i]) tokens.set(line, oldTokens[i]!);
  });
  newSide.forEach((line, i) => {
    if (newTokens[i]) tokens.set(line, newTokens[i]!);
  });
  return newTokens.length > 0 || oldTokens.length > 0;
}
