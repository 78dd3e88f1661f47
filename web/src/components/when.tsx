import type { ReactNode } from 'react';
import { None } from './none';

const DATE = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' });

// An instant as a person reads it, with the exact value for machines; a dash when there is none.
export function When({ iso, none = <None /> }: { iso: string | null | undefined; none?: ReactNode }) {
  return iso ? <time dateTime={iso}>{DATE.format(new Date(iso))}</time> : <>{none}</>;
}
