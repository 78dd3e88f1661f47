import { useQuery } from '@tanstack/react-query';
import { QueryState } from '../components/query-state';
import { trpc } from '../trpc';

export function AccountPage() {
  const account = useQuery(trpc.dashboard.account.get.queryOptions());
  return (
    <QueryState query={account} loading="Loading the account…">
      {(data) => <AccountFacts {...data} />}
    </QueryState>
  );
}

function AccountFacts({ name, maxActiveRuns, activeRuns }: { name: string; maxActiveRuns: number | null; activeRuns: number }) {
  const share = maxActiveRuns ? Math.min(100, Math.round((activeRuns / maxActiveRuns) * 100)) : null;
  return (
    <dl className="facts">
      <div>
        <dt>Name</dt>
        <dd>{name}</dd>
      </div>
      <div>
        <dt>Active-run limit</dt>
        <dd>{maxActiveRuns === null ? 'No limit' : maxActiveRuns.toLocaleString('en')}</dd>
      </div>
      <div>
        <dt>Active runs now</dt>
        <dd>
          {activeRuns.toLocaleString('en')}
          {share !== null && (
            <>
              {' '}
              ({share} % of the limit)
              <meter min={0} max={maxActiveRuns!} value={activeRuns} aria-label="Active runs against the limit" />
            </>
          )}
        </dd>
      </div>
    </dl>
  );
}
