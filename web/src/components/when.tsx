const DATE = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' });

// An instant as a person reads it, with the exact value for machines.
export function When({ iso, none = '' }: { iso: string | null | undefined; none?: string }) {
  return iso ? <time dateTime={iso}>{DATE.format(new Date(iso))}</time> : <>{none}</>;
}
