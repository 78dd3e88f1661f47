import type { useCursorPages } from './use-cursor-pages';

// "Previous" and "Next" under a list, with where the reader is.
export function Pager({ pages, nextCursor, label }: { pages: ReturnType<typeof useCursorPages>; nextCursor: string | null | undefined; label: string }) {
  if (pages.pageNumber === 1 && !nextCursor) return null;
  return (
    <nav className="pager" aria-label={`${label} pages`}>
      <button type="button" className="secondary" disabled={pages.pageNumber === 1} onClick={pages.previous}>
        Previous
      </button>
      <span>Page {pages.pageNumber}</span>
      <button type="button" className="secondary" disabled={!nextCursor} onClick={() => nextCursor && pages.next(nextCursor)}>
        Next
      </button>
    </nav>
  );
}
