// The contact's custom fields, edited as JSON text.
export function CustomFieldsInput({ value, error, onChange }: { value: string; error: string | undefined; onChange: (value: string) => void }) {
  return (
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
