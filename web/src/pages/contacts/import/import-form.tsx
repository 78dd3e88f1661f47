import { useMutation, useQuery } from '@tanstack/react-query';
import { useId, useState, type DragEvent } from 'react';
import { ErrorBanner } from '../../../components/error-banner';
import { Field } from '../../../components/field';
import { SelectField } from '../../../components/select-field';
import { Table } from '../../../components/table';
import { navigate } from '../../../router';
import { fieldErrors, trpc } from '../../../trpc';
import { uploadFile, UploadError } from './upload-file';

// The preview reads the file's first 64 KiB: enough for the header and the first rows of any
// sensible file, and the whole of a small one.
const PREVIEW_BYTES = 64 * 1024;
const LEAVE_OUT = '';
const FIELDS = [
  ['email', 'Email'],
  ['phone', 'Phone'],
  ['firstName', 'First name'],
  ['lastName', 'Last name'],
  ['tags', 'Tags'],
  ['emailSubscriptionStatus', 'Email subscription'],
  ['whatsappSubscriptionStatus', 'WhatsApp subscription'],
] as const;

interface Preview {
  columns: Array<{ header: string; field: string | null }>;
  rows: string[][];
}

// A column's choices: the contact's fields, a custom field named as the column (or as the API's
// default named it), or left out.
function fieldOptions(header: string, defaultField: string | null): Array<readonly [string, string]> {
  const custom = new Set([`customFields.${header}`]);
  if (defaultField?.startsWith('customFields.')) custom.add(defaultField);
  return [
    [LEAVE_OUT, 'Leave out'],
    ...FIELDS,
    ...[...custom].filter((field) => field !== 'customFields.').map((field) => [field, `Custom field “${field.slice('customFields.'.length)}”`] as const),
  ];
}

export function ImportForm() {
  const [file, setFile] = useState<File | null>(null);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [mapping, setMapping] = useState<Record<string, string>>({});
  const [tags, setTags] = useState('');
  const [sequenceId, setSequenceId] = useState('');
  const [optedIn, setOptedIn] = useState(false);
  const [dragging, setDragging] = useState(false);
  const [startError, setStartError] = useState<UploadError | null>(null);
  const [starting, setStarting] = useState(false);
  const fileInputId = useId();
  const sequences = useQuery(trpc.dashboard.sequences.list.queryOptions({ status: 'active', limit: 100 }));
  const look = useMutation(
    trpc.dashboard.contacts.imports.preview.mutationOptions({
      onSuccess: ({ preview: found }) => {
        setPreview(found);
        setMapping(Object.fromEntries(found.columns.map((column) => [column.header, column.field ?? LEAVE_OUT])));
      },
    }),
  );

  const choose = async (chosen: File | undefined) => {
    if (!chosen) return;
    setFile(chosen);
    setPreview(null);
    setStartError(null);
    const text = await chosen.slice(0, PREVIEW_BYTES).text();
    look.mutate({ text, complete: chosen.size <= PREVIEW_BYTES });
  };
  const onDrop = (event: DragEvent<HTMLDivElement>) => {
    event.preventDefault();
    setDragging(false);
    void choose(event.dataTransfer.files[0]);
  };

  const start = async () => {
    if (!file || !preview) return;
    setStarting(true);
    setStartError(null);
    try {
      const created = await uploadFile(file, {
        mapping: Object.fromEntries(Object.entries(mapping).map(([header, field]) => [header, field === LEAVE_OUT ? null : field])),
        tags: tags.split(',').map((tag) => tag.trim()).filter((tag) => tag !== ''),
        sequenceId: sequenceId || undefined,
        optedIn,
        fileName: file.name,
      });
      navigate(`/contacts/import?id=${encodeURIComponent(created.id)}`);
    } catch (error) {
      setStartError(error instanceof UploadError ? error : new UploadError('Something went wrong. Please try again.', {}));
      setStarting(false);
    }
  };

  const previewErrors = fieldErrors(look.error);
  const details = startError?.details ?? {};
  const fileProblem = previewErrors.file ?? details.file;
  const hasEmail = Object.values(mapping).includes('email');

  return (
    <>
      <div className="toolbar">
        <p>
          Bring a list as a CSV file (UTF-8, comma or semicolon, up to 50 MB and 1,000,000 rows). Each row is added as a
          contact, or merged into the contact with its email; rows that cannot be read are listed for download.
        </p>
      </div>
      <section className="panel" aria-labelledby="file-heading">
        <h2 id="file-heading">1. Choose a file</h2>
        <div className={`drop-zone${dragging ? ' dragging' : ''}`} onDragOver={(e) => { e.preventDefault(); setDragging(true); }} onDragLeave={() => setDragging(false)} onDrop={onDrop}>
          <label htmlFor={fileInputId}>CSV file</label>
          <p className="hint" id={`${fileInputId}-hint`}>Choose it, or drop it here.</p>
          <input
            id={fileInputId}
            type="file"
            accept=".csv,text/csv"
            aria-describedby={`${fileInputId}-hint${fileProblem ? ` ${fileInputId}-error` : ''}`}
            aria-invalid={fileProblem ? true : undefined}
            onChange={(e) => void choose(e.target.files?.[0])}
          />
          {fileProblem && (
            <p className="error" id={`${fileInputId}-error`}>
              {fileProblem}
            </p>
          )}
        </div>
        {look.isPending && <p role="status">Reading the file…</p>}
        {look.isError && !previewErrors.file && <ErrorBanner error={look.error} />}
      </section>

      {preview && file && (
        <>
          <section className="panel" aria-labelledby="preview-heading">
            <h2 id="preview-heading">2. Check the first rows and map the columns</h2>
            <Table caption={`First rows of ${file.name}`} columns={preview.columns.map((column, i) => column.header || `Column ${i + 1}`)}>
              {preview.rows.length === 0 ? (
                <tr>
                  <td colSpan={preview.columns.length}>The file has a header and no rows.</td>
                </tr>
              ) : (
                preview.rows.map((row, i) => (
                  <tr key={i}>
                    {preview.columns.map((_, j) => (
                      <td key={j}>{row[j] ?? ''}</td>
                    ))}
                  </tr>
                ))
              )}
            </Table>
            <div className="mapping">
              {preview.columns.map((column, i) => (
                <SelectField
                  key={`${i}-${column.header}`}
                  label={`Column “${column.header || `Column ${i + 1}`}”`}
                  options={fieldOptions(column.header, column.field)}
                  value={mapping[column.header] ?? LEAVE_OUT}
                  error={details[`mapping.${column.header}`]}
                  onChange={(e) => setMapping({ ...mapping, [column.header]: e.target.value })}
                />
              ))}
            </div>
            {!hasEmail && (
              <p className="banner warning" role="status">
                Map one column to Email: it is how a row finds its contact.
              </p>
            )}
            {details['mapping.email'] && <p className="error">{details['mapping.email']}</p>}
          </section>

          <section className="panel" aria-labelledby="options-heading">
            <h2 id="options-heading">3. Tags, sequence and consent</h2>
            <Field
              label="Tags to add"
              hint="Comma-separated; added to every imported contact (their other tags stay)."
              value={tags}
              error={details.tags}
              onChange={(e) => setTags(e.target.value)}
            />
            <SelectField
              label="Enroll into sequence"
              options={[['', 'None'], ...(sequences.data?.sequences ?? []).map((sequence) => [sequence.id, sequence.name] as const)]}
              value={sequenceId}
              error={details.sequenceId}
              onChange={(e) => setSequenceId(e.target.value)}
            />
            <div className="field wide">
              <label className="check">
                <input type="checkbox" checked={optedIn} aria-describedby="opted-in-hint" onChange={(e) => setOptedIn(e.target.checked)} /> These people opted in
              </label>
              <p className="hint" id="opted-in-hint">
                Tick only if everyone in the file agreed to hear from you. Then a subscription column that says “subscribed”
                resubscribes a contact who had unsubscribed. Without it the import never resubscribes anyone: unsubscribed
                and suppressed addresses stay so.
              </p>
            </div>
            {startError && (
              <p className="banner error" role="alert">
                {startError.message}
              </p>
            )}
            <div className="actions start">
              <button type="button" disabled={starting || !hasEmail} onClick={() => void start()}>
                {starting ? 'Sending the file…' : 'Start import'}
              </button>
            </div>
          </section>
        </>
      )}
    </>
  );
}
