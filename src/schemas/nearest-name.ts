// The known name a mistyped one most likely meant (`firstname` -> `firstName`, `tag` -> `tags`,
// `emial` -> `email`), or undefined when none is close enough to be worth offering.

// Letter case, `_` and `-` are how people most often miss a name (first_name, FirstName).
const folded = (name: string) => name.toLowerCase().replace(/[_-]/g, '');

// Edits (insert, delete, replace, swap two neighbours) from a to b: optimal string alignment.
export function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j += 1) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

// A name longer than this is not a typo of a field name; it is not compared (bounded work).
const MAX_COMPARED_LENGTH = 64;

export function nearestName(name: string, known: readonly string[]): string | undefined {
  if (name.length > MAX_COMPARED_LENGTH) return undefined;
  const target = folded(name);
  // About one edit in three characters, at least one.
  const allowed = Math.max(1, Math.floor(target.length / 3));
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(target, folded(candidate));
    if (distance <= allowed && (!best || distance < best.distance)) best = { name: candidate, distance };
  }
  return best?.name;
}
