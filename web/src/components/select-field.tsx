import { useId, type SelectHTMLAttributes } from 'react';

// A labelled select with the service's error for it, like Field.
export function SelectField({
  label,
  error,
  options,
  ...select
}: { label: string; error?: string; options: ReadonlyArray<readonly [value: string, text: string]> } & SelectHTMLAttributes<HTMLSelectElement>) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} aria-invalid={error ? true : undefined} aria-describedby={error ? `${id}-error` : undefined} {...select}>
        {options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
      {error && (
        <p className="error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}
