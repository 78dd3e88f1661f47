import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Link } from '../router';
import { QueryState } from './query-state';

// A page of one thing: while it loads, or why it could not (with the way back to its list),
// then the path to it above what it shows.
export function ItemPage<T>({
  query,
  loading,
  list,
  crumb,
  children,
}: {
  query: UseQueryResult<T, unknown>;
  loading: string;
  list: { to: string; label: string };
  crumb: (data: T) => ReactNode;
  children: (data: T) => ReactNode;
}) {
  return (
    <QueryState query={query} loading={loading} afterError={<Link to={list.to}>Back to {list.label.toLowerCase()}</Link>}>
      {(data) => (
        <>
          <p className="crumbs">
            <Link to={list.to}>{list.label}</Link> / {crumb(data)}
          </p>
          {children(data)}
        </>
      )}
    </QueryState>
  );
}
