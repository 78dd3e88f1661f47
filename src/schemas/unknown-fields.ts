import { z } from 'zod';
import { nearestName } from './nearest-name';

// Every input object of the API is strict (z.strictObject): a field it does not know is a 400,
// never dropped in silence (a typo'd `firstname` used to make a contact with no first name).
// zod reports one `unrecognized_keys` issue per object; its message here names each key and
// the object's nearest known field, and unknownFieldDetails turns it into one detail per key,
// at the key's own path (`contacts.3.firstname`), as every other problem is reported.

// Fields an input object declares only so a client may send back what it read (a contact's
// id, createdAt, updatedAt): accepted, ignored, and never offered as a suggestion.
const sentBackFields = new WeakSet<object>();

export function ignoredField(description: string) {
  // Optional outside the transform, so the output type says the key may be absent. readOnly:
  // JSON Schema's word for a value the server owns, whose writes it ignores or rejects.
  const field = z
    .unknown()
    .transform(() => undefined)
    .optional()
    .meta({ description, readOnly: true });
  sentBackFields.add(field);
  return field;
}

interface UnrecognizedKeysIssue {
  code: 'unrecognized_keys';
  keys: readonly string[];
  inst?: unknown;
}

// The issue zod finalizes copies the raw issue's fields, so its `keys` is the same array: the
// suggestions made while the object schema was at hand are found again by it.
const suggestionsByKeys = new WeakMap<readonly string[], ReadonlyMap<string, string | undefined>>();

function knownFields(inst: unknown): string[] {
  const shape = (inst as { _zod?: { def?: { shape?: Record<string, object> } } })?._zod?.def?.shape ?? {};
  return Object.keys(shape).filter((key) => !sentBackFields.has(shape[key]!));
}

function suggestionsFor(issue: UnrecognizedKeysIssue): ReadonlyMap<string, string | undefined> {
  const known = knownFields(issue.inst);
  const suggestions = new Map(issue.keys.map((key) => [key, nearestName(key, known)]));
  suggestionsByKeys.set(issue.keys, suggestions);
  return suggestions;
}

const quoted = (name: string) => JSON.stringify(name);

function unrecognizedKeysMessage(issue: UnrecognizedKeysIssue): string {
  const suggestions = suggestionsFor(issue);
  const named = [...suggestions].map(([key, near]) => (near ? `${quoted(key)} (did you mean ${quoted(near)}?)` : quoted(key)));
  return named.length === 1 ? `Unknown field ${named[0]}` : `Unknown fields ${named.join(', ')}`;
}

// The message at a key's own path, where the path already names the key.
export function unknownFieldMessage(suggestion: string | undefined): string {
  return suggestion ? `Unknown field; did you mean ${quoted(suggestion)}?` : 'Unknown field';
}

export interface FieldProblem {
  path: PropertyKey[];
  message: string;
}

// One problem per unknown key, at its path; any other issue as it is.
export function unknownFieldDetails(issue: FieldProblem & { code?: string; keys?: readonly string[] }): FieldProblem[] {
  if (issue.code !== 'unrecognized_keys' || !issue.keys) return [issue];
  const suggestions = suggestionsByKeys.get(issue.keys);
  return issue.keys.map((key) => ({ path: [...issue.path, key], message: unknownFieldMessage(suggestions?.get(key)) }));
}

// Installed once for the process (zod keeps its configuration on globalThis): every schema's
// unknown keys read the same, in the API, the command line and the engine's checks.
z.config({
  customError: (issue) => (issue.code === 'unrecognized_keys' ? unrecognizedKeysMessage(issue as unknown as UnrecognizedKeysIssue) : undefined),
});
