// Seeded benchmark corpus: code-like files and the edits reviewers see.
import { prng } from '../../test/diff/git-oracle.js';

export interface BenchCase {
  /** Short name printed in the table. */
  name: string;
  /** Old content. */
  before: string;
  /** New content. */
  after: string;
  /** An adversarial case beyond the reference corpus, reported separately in the totals. */
  stress?: boolean;
}

/** A code-like file of about `lines` lines: functions with bodies, blank lines, braces. */
function codeLines(rand: () => number, lines: number, tag = ''): string[] {
  const out: string[] = [];
  let f = 0;
  while (out.length < lines) {
    out.push(`export function ${tag}fn${f++}(input: number): number {`);
    const body = 3 + Math.floor(rand() * 10);
    for (let i = 0; i < body; i++) {
      const r = rand();
      if (r < 0.1) out.push('');
      else if (r < 0.25) out.push('  if (input > 0) {', `    input = input * ${Math.floor(rand() * 97)};`, '  }');
      else out.push(`  const v${Math.floor(rand() * 1000)} = compute(input, ${Math.floor(rand() * 100000)});`);
    }
    out.push('  return input;', '}', '');
  }
  return out.slice(0, lines);
}

const join = (lines: string[]): string => lines.map((l) => `${l}\n`).join('');

function smallEdits(rand: () => number, lines: string[], edits: number): string[] {
  const out = [...lines];
  for (let e = 0; e < edits; e++) {
    const pos = Math.floor(rand() * out.length);
    const r = rand();
    if (r < 0.4) out[pos] = `  const edited${e} = compute(input, ${Math.floor(rand() * 1e6)});`;
    else if (r < 0.7) out.splice(pos, 0, `  // added ${e}`, `  log(input, ${e});`);
    else out.splice(pos, 2);
  }
  return out;
}

export function buildCorpus(seed = 2024): BenchCase[] {
  const rand = prng(seed);
  const cases: BenchCase[] = [];
  for (const n of [1000, 3000, 10000]) {
    const a = codeLines(rand, n);
    cases.push({ name: `small edits, ${n / 1000}k lines`, before: join(a), after: join(smallEdits(rand, a, 8)) });
  }
  {
    const a = codeLines(rand, 5000);
    const b = a.map((l, i) => (Math.floor(i / 40) % 2 === 0 ? `${l} // rewritten ${i}` : l));
    cases.push({ name: 'large rewrite, 5k lines (half)', before: join(a), after: join(b) });
  }
  {
    const a = codeLines(rand, 5000);
    const b = [...a];
    for (let k = 0; k < 12; k++) {
      const start = Math.floor(rand() * (b.length - 60));
      const block = b.splice(start, 20 + Math.floor(rand() * 40));
      b.splice(Math.floor(rand() * b.length), 0, ...block);
    }
    cases.push({ name: 'moved blocks, 5k lines', before: join(a), after: join(b) });
  }
  {
    const a = codeLines(rand, 10000);
    const b = a.map((l, i) => (i % 2 === 1 ? `${l} /* changed ${i} */` : l));
    cases.push({ name: '10k lines, 5k changed (every other)', before: join(a), after: join(b) });
  }
  {
    const a = codeLines(rand, 10000);
    const b = [...a];
    let changed = 0;
    const seen = new Set<number>();
    while (changed < 5000) {
      const i = Math.floor(rand() * b.length);
      if (seen.has(i)) continue;
      seen.add(i);
      b[i] = `  changed(${i}, ${Math.floor(rand() * 1e6)});`;
      changed++;
    }
    cases.push({ name: '10k lines, 5k changed (random)', before: join(a), after: join(b) });
  }
  {
    const a = codeLines(rand, 50000);
    cases.push({ name: 'small edits, 50k lines', before: join(a), after: join(smallEdits(rand, a, 20)) });
    const b = a.map((l, i) => (rand() < 0.1 ? `${l} // touched ${i}` : l));
    cases.push({ name: '50k lines, 10% changed', before: join(a), after: join(b) });
  }
  {
    // About 1 MiB of code, two independent versions of the same generator: a total rewrite.
    const upTo1MiB = (lines: string[]): string[] => {
      let size = 0;
      let n = 0;
      while (n < lines.length && size + (lines[n] as string).length + 1 <= 1024 * 1024) size += (lines[n++] as string).length + 1;
      return lines.slice(0, n);
    };
    const a = upTo1MiB(codeLines(rand, 60000, 'a'));
    const b = upTo1MiB(codeLines(rand, 60000, 'b'));
    cases.push({ name: '~1 MiB, total rewrite', before: join(a), after: join(b) });
    cases.push({ name: '~1 MiB, small edits', before: join(a), after: join(smallEdits(rand, a, 30)) });
  }
  {
    // About 1 MiB of short lines from a 4-line alphabet: every line matches many others.
    const line = () => `${Math.floor(rand() * 4)}${'.'.repeat(Math.floor(rand() * 40))}`;
    const make = () => {
      const l: string[] = [];
      let s = 0;
      while (s < 1000 * 1024) {
        const x = line();
        l.push(x);
        s += x.length + 1;
      }
      return l;
    };
    cases.push({ name: '~1 MiB, repetitive lines rewritten (stress)', before: join(make()), after: join(make()), stress: true });
  }
  return cases;
}
