import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { ErrorBanner } from './error-banner';

// A query's four states the same way on every page: "Loading…" while nothing has come, the
// service's error (with a way out, if the page has one), the empty message, or the data.
export function QueryState<T>({
  query,
  loading,
  afterError,
  isEmpty,
  empty,
  children,
}: {
  query: UseQueryResult<T, unknown>;
  loading: string;
  afterError?: ReactNode;
  isEmpty?: (data: T) => boolean;
  empty?: ReactNode;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) return <p role="status">{loading}</p>;
  if (query.isError) {
    return (
      <>
        <ErrorBanner error={query.error} />
        {afterError}
      </>
    );
  }
  if (isEmpty?.(query.data)) return <p className="empty">{empty}</p>;
  return <>{children(query.data)}</>;
}
