// A blank value: a dash to the eye, "none" to a screen reader (which would read the dash as
// nothing, or as "em dash").
export function None() {
  return (
    <span className="none">
      <span aria-hidden="true">—</span>
      <span className="visually-hidden">none</span>
    </span>
  );
}
