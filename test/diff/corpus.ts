// Seeded code-like test corpus: functions, blank lines, braces, repeated boilerplate.
import { prng } from './git-oracle.js';

function codeFile(rand: () => number, functions: number): string[] {
  const lines: string[] = [];
  for (let f = 0; f < functions; f++) {
    lines.push(`function f${f}(x) {`);
    const body = 2 + Math.floor(rand() * 6);
    for (let i = 0; i < body; i++) {
      const r = rand();
      if (r < 0.15) lines.push('');
      else if (r < 0.3) lines.push('  if (x) {', `    x = x + ${Math.floor(rand() * 9)};`, '  }');
      else if (r < 0.4) lines.push('  return x;');
      else lines.push(`  const v${Math.floor(rand() * 50)} = call(${Math.floor(rand() * 100)});`);
    }
    lines.push('}', '');
  }
  return lines;
}

function mutate(rand: () => number, lines: string[]): string[] {
  const out = [...lines];
  const edits = 1 + Math.floor(rand() * 6);
  for (let e = 0; e < edits; e++) {
    const pos = Math.floor(rand() * out.length);
    const r = rand();
    if (r < 0.3) out.splice(pos, 0, ...codeFile(rand, 1));
    else if (r < 0.5) out.splice(pos, 1 + Math.floor(rand() * 6));
    else if (r < 0.7) out[pos] = `  changed(${Math.floor(rand() * 1000)});`;
    else if (r < 0.85) {
      const len = 1 + Math.floor(rand() * 8);
      const block = out.splice(pos, len);
      out.splice(Math.floor(rand() * out.length), 0, ...block);
    } else out.splice(pos, 0, '', '  // note', '');
  }
  return out;
}

/** Pairs of code-like texts, each an original and an edited version. */
export function codeLikeCorpus(seed: number, count: number): [string, string][] {
  const rand = prng(seed);
  const pairs: [string, string][] = [];
  for (let i = 0; i < count; i++) {
    const a = codeFile(rand, 2 + Math.floor(rand() * 20));
    const b = mutate(rand, a);
    const join = (l: string[]) => l.map((s) => `${s}\n`).join('');
    let y = join(b);
    if (rand() < 0.1) y = y.slice(0, -1);
    pairs.push([join(a), y]);
  }
  return pairs;
}
