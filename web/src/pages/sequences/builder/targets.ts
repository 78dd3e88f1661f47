// The options of a select that names a step to go to: the sequence's other steps, and the value
// itself first when it names none of them (a step removed, or an id typed elsewhere), so that the
// select shows what will be sent; an empty value asks for a choice.
export function targetOptions(targets: ReadonlyArray<readonly [string, string]>, value: string): Array<readonly [string, string]> {
  return targets.some(([id]) => id === value) ? [...targets] : [[value, value ? `${value}: not a step` : 'Choose a step'], ...targets];
}
