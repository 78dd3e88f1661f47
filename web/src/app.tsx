import { useQuery } from '@tanstack/react-query';
import { useEffect, useMemo } from 'react';
import { Layout } from './components/layout';
import { Status } from './components/status';
import { AccountPage } from './pages/account';
import { ContactPage } from './pages/contacts/contact-page';
import { ContactsPage } from './pages/contacts/contacts-list';
import { SequencePage } from './pages/sequences/sequence-page';
import { SequencesPage } from './pages/sequences/sequences-list';
import { ApiKeysPage } from './pages/settings/developer/api-keys';
import { WebhooksPage } from './pages/settings/developer/webhooks';
import { SetupPage } from './pages/setup';
import { SignInPage } from './pages/sign-in';
import { Redirect, useLocation } from './router';
import { trpc } from './trpc';

const PAGES: Record<string, { title: string; Page: () => React.ReactNode }> = {
  '/contacts': { title: 'Contacts', Page: ContactsPage },
  '/sequences': { title: 'Sequences', Page: SequencesPage },
  '/settings/developer/api-keys': { title: 'API keys', Page: ApiKeysPage },
  '/settings/developer/webhooks': { title: 'Webhooks', Page: WebhooksPage },
  '/account': { title: 'Account', Page: AccountPage },
};

// Pages of one thing, by its id in the path.
const ITEM_PAGES: Array<{ pattern: RegExp; title: string; Page: (props: { id: string }) => React.ReactNode }> = [
  { pattern: /^\/contacts\/([^/]+)$/, title: 'Contact', Page: ContactPage },
  { pattern: /^\/sequences\/([^/]+)$/, title: 'Sequence', Page: SequencePage },
];

function pageFor(route: string): { title: string; Page: () => React.ReactNode } | undefined {
  if (PAGES[route]) return PAGES[route];
  for (const { pattern, title, Page } of ITEM_PAGES) {
    const id = pattern.exec(route)?.[1];
    if (id) return { title, Page: () => <Page id={decodeURIComponent(id)} key={id} /> };
  }
  return undefined;
}
const HOME = '/settings/developer/api-keys';

export function App() {
  const { route } = useLocation();
  const me = useQuery(trpc.dashboard.auth.me.queryOptions());
  const page = useMemo(() => pageFor(route), [route]);
  useEffect(() => {
    document.title = `${page?.title ?? (route === '/setup' ? 'Set your password' : 'Sign in')} · Dashboard`;
  }, [page, route]);

  // The setup link works signed in or not: it is about another person's password.
  if (route === '/setup') return <SetupPage />;
  if (me.isPending) return <Status>Loading…</Status>;
  if (me.isError) return <Status role="alert">The dashboard could not reach the service. Reload to try again.</Status>;
  if (!me.data) return route === '/sign-in' ? <SignInPage /> : <Redirect to="/sign-in" />;
  if (!page) return <Redirect to={HOME} />;
  return (
    <Layout email={me.data.email} title={page.title}>
      <page.Page />
    </Layout>
  );
}
