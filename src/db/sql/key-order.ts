// The order in which an index holds text keys compared byte by byte (utf8mb4_bin on MySQL,
// BINARY on SQLite): UTF-8 byte order, which is code point order. JavaScript's default sort
// compares UTF-16 code units, which puts characters beyond U+FFFF before U+E000..U+FFFF: rows
// sorted that way would reach the index out of its order. Sort keys with this before writing
// or locking them, so every transaction takes its locks in the index's own order.
export function byIndexOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
