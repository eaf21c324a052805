/** The option closest to a mistyped one, when it is close enough to be what was meant. */
export function nearest(typed: string, options: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of options) {
    const distance = editDistance(typed, name);
    if (!best || distance < best.distance) best = { name, distance };
  }
  if (!best) return undefined;
  const allowed = Math.max(2, Math.floor(best.name.length / 3));
  return best.distance <= allowed || best.name.startsWith(typed) || typed.startsWith(best.name) ? best.name : undefined;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}
