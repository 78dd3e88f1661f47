import { useState, type FormEvent } from 'react';
import { navigate, useLocation } from '../router';

// A list's filters, kept in the page's address (?name=value&...): Back from a row returns to the
// same search, and a search can be bookmarked. `draft` is what is typed until it is searched
// for; it follows the address when that changes (Back). The contacts and suppressions lists.
export function useUrlFilters<F extends { [K in keyof F]: string }>(path: string, parse: (search: URLSearchParams) => F, empty: F) {
  const { search } = useLocation();
  const filters = parse(search);
  const [draft, setDraft] = useState<F>(filters);
  const [shown, setShown] = useState(search.toString());
  if (shown !== search.toString()) {
    setShown(search.toString());
    setDraft(filters);
  }
  const show = (next: F) => {
    const params = new URLSearchParams(Object.entries<string>(next).filter(([, value]) => value.trim() !== ''));
    navigate(params.size > 0 ? `${path}?${params}` : path);
  };
  return {
    search,
    filters,
    draft,
    setDraft,
    filtered: Object.values<string>(filters).some(Boolean),
    submit: (event: FormEvent) => {
      event.preventDefault();
      show(draft);
    },
    clear: () => {
      setDraft(empty);
      show(empty);
    },
  };
}
