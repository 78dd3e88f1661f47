import { None } from '../../../components/none';

// The contact's custom fields as a person reads them: one row a field, a nested value as
// compact JSON in its cell.
export function CustomFieldsTable({ fields }: { fields: Record<string, unknown> }) {
  const entries = Object.entries(fields);
  if (entries.length === 0) return <p className="hint">No custom fields.</p>;
  return (
    <div className="table-wrap custom-fields">
      <table>
        <caption className="visually-hidden">Custom fields</caption>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          {entries.map(([key, value]) => (
            <tr key={key}>
              <th scope="row" className="mono">
                {key}
              </th>
              <td>{value === null || value === '' ? <None /> : typeof value === 'string' ? value : <code>{JSON.stringify(value)}</code>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

// The contact's custom fields, edited as JSON text, behind a disclosure (open while there is
// a problem with them).
export function CustomFieldsInput({ value, error, onChange }: { value: string; error: string | undefined; onChange: (value: string) => void }) {
  return (
    <details className="json-edit" open={error ? true : undefined}>
      <summary>Edit custom fields as JSON</summary>
      <div className="field">
      <label htmlFor="custom-fields">Custom fields (JSON)</label>
      <textarea
        id="custom-fields"
        className="mono json"
        rows={Math.min(12, Math.max(3, value.split('\n').length))}
        spellCheck={false}
        value={value}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? 'custom-fields-error' : undefined}
        onChange={(e) => onChange(e.target.value)}
      />
      {error && (
        <p className="error" id="custom-fields-error">
          {error}
        </p>
      )}
      </div>
    </details>
  );
}

export const NOT_AN_OBJECT = 'Must be a JSON object, e.g. {"plan": "pro"}';

// The text as the object the API takes (an emptied box: no fields), or null when it is not one.
export function parseCustomFields(text: string): Record<string, unknown> | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.trim() === '' ? '{}' : text);
  } catch {
    return null;
  }
  return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
}
