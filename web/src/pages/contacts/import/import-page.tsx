import { useLocation } from '../../../router';
import { ImportForm } from './import-form';
import { ImportProgress } from './import-progress';

// Contacts -> Import: choose a file, map its columns, start; then its progress. The import's id
// is in the address (?id=), so a reload, or a link, shows the same import as it moves.
export function ImportPage() {
  const { search } = useLocation();
  const id = search.get('id');
  return id ? <ImportProgress id={id} key={id} /> : <ImportForm />;
}
