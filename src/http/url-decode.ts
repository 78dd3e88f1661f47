// decodeURIComponent that leaves a malformed escape (`%E0%A4%A`) as it is: what follows
// (validation, a lookup) then answers for it, instead of an exception.
export function decodeOrKeep(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
