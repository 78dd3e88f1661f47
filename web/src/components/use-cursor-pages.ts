import { useState } from 'react';

// Every list walks the list API's cursors the same way: the cursors of the pages seen so far
// are kept, so "Previous" goes back without the API needing a backward cursor. A change of
// filters starts again at the first page (a cursor is valid only for its own filters).
export function useCursorPages(filtersKey: string) {
  const [state, setState] = useState<{ key: string; cursors: (string | undefined)[] }>({ key: filtersKey, cursors: [undefined] });
  const cursors = state.key === filtersKey ? state.cursors : [undefined];
  return {
    cursor: cursors[cursors.length - 1],
    pageNumber: cursors.length,
    next: (cursor: string) => setState({ key: filtersKey, cursors: [...cursors, cursor] }),
    previous: () => setState({ key: filtersKey, cursors: cursors.slice(0, -1) }),
  };
}
