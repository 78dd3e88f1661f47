// Figures into text: medians, spreads, and plain aligned tables.

export function median(values: readonly number[]): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

// "0.62 (0.58–0.66)": the median, and the smallest and largest of the rounds.
export function spread(values: readonly number[], digits = 2): string {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return '-';
  const m = median(finite).toFixed(digits);
  if (finite.length === 1) return m;
  return `${m} (${Math.min(...finite).toFixed(digits)}–${Math.max(...finite).toFixed(digits)})`;
}

export function fixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '-';
}

// Columns padded to their widest cell; numbers-looking columns right-aligned.
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const numeric = header.map((_, i) => i > 0 && rows.every((row) => /^[-\d.,()–×% ]*$/.test(row[i] ?? '')));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (numeric[i] ? cell.padStart(widths[i]) : cell.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

// The measured columns of one table row, over a pair's rounds: medians of req/s, CPU ms per
// request, p50 and p99, then the summed good and wrong answers.
export function medianCells(
  runs: ReadonlyArray<{ perSecond: number; cpuMsPerRequest: number; p50: number; p99: number; ok: number; wrong: number }>,
): string[] {
  return [
    fixed(median(runs.map((r) => r.perSecond)), 0),
    fixed(median(runs.map((r) => r.cpuMsPerRequest)), 3),
    fixed(median(runs.map((r) => r.p50)), 2),
    fixed(median(runs.map((r) => r.p99)), 2),
    String(runs.reduce((sum, r) => sum + r.ok, 0)),
    String(runs.reduce((sum, r) => sum + r.wrong, 0)),
  ];
}
