import { useQuery } from '@tanstack/react-query';
import { lazy, Suspense, useEffect, useMemo, useState } from 'react';
import { Layout } from './components/layout';
import { PageTitleContext, type NamedPage } from './components/page-title';
import { Status } from './components/status';
import { AccountPage } from './pages/account';
import { ContactPage } from './pages/contacts/contact-page';
import { ContactsPage } from './pages/contacts/contacts-list';
import { SequencePage } from './pages/sequences/sequence-page';
import { SequencesPage } from './pages/sequences/sequences-list';
import { ApiKeysPage } from './pages/settings/developer/api-keys';
import { WebhooksPage } from './pages/settings/developer/webhooks';
import { ChannelsPage } from './pages/settings/channels';
import { SetupPage } from './pages/setup';
import { SignInPage } from './pages/sign-in';
import { HOME, PRODUCT, Redirect, returnPath, useLocation } from './router';
import { trpc } from './trpc';

// Pages loaded when first opened: their code (and a run's timeline, a message editor) stays out
// of the first page's bytes.
const RunPage = lazy(() => import('./pages/runs/run-page').then((module) => ({ default: module.RunPage })));
const MessagePage = lazy(() => import('./pages/messages/message-page').then((module) => ({ default: module.MessagePage })));

function Lazily({ children }: { children: React.ReactNode }) {
  return <Suspense fallback={<p role="status">Loading…</p>}>{children}</Suspense>;
}

const PAGES: Record<string, { title: string; Page: () => React.ReactNode }> = {
  '/contacts': { title: 'Contacts', Page: ContactsPage },
  '/sequences': { title: 'Sequences', Page: SequencesPage },
  '/settings/developer/api-keys': { title: 'API keys', Page: ApiKeysPage },
  '/settings/developer/webhooks': { title: 'Webhooks', Page: WebhooksPage },
  '/settings/channels': { title: 'Channels', Page: ChannelsPage },
  '/account': { title: 'Account', Page: AccountPage },
};

// Pages of one thing, by its id in the path.
const ITEM_PAGES: Array<{ pattern: RegExp; title: string; Page: (props: { id: string }) => React.ReactNode }> = [
  { pattern: /^\/contacts\/([^/]+)$/, title: 'Contact', Page: ContactPage },
  { pattern: /^\/sequences\/([^/]+)$/, title: 'Sequence', Page: SequencePage },
  { pattern: /^\/runs\/([^/]+)$/, title: 'Run', Page: ({ id }) => <Lazily><RunPage id={id} /></Lazily> },
  {
    // The message editor on a step of a sequence: "<sequence id>/messages/<step id>".
    pattern: /^\/sequences\/([^/]+\/messages\/[^/]+)$/,
    title: 'Message',
    Page: ({ id }) => {
      const [sequenceId, , stepId] = id.split('/');
      return <Lazily><MessagePage sequenceId={sequenceId} stepId={stepId} /></Lazily>;
    },
  },
];

function pageFor(route: string): { title: string; Page: () => React.ReactNode } | undefined {
  if (PAGES[route]) return PAGES[route];
  for (const { pattern, title, Page } of ITEM_PAGES) {
    const id = pattern.exec(route)?.[1];
    if (id) return { title, Page: () => <Page id={decodeURIComponent(id)} key={id} /> };
  }
  return undefined;
}

export function App() {
  const { route, search } = useLocation();
  const me = useQuery(trpc.dashboard.auth.me.queryOptions());
  const page = useMemo(() => pageFor(route), [route]);
  // A page of one thing names itself once loaded (a contact by its name); until then, and on
  // any other route, the page's kind.
  const [named, setNamed] = useState<NamedPage | null>(null);
  const title = named?.route === route ? named.title : page?.title;
  useEffect(() => {
    document.title = `${title ?? (route === '/setup' ? 'Set your password' : 'Sign in')} · ${PRODUCT}`;
  }, [title, route]);

  // The setup link works signed in or not: it is about another person's password.
  if (route === '/setup') return <SetupPage />;
  if (me.isPending) return <Status>Loading…</Status>;
  if (me.isError) return <Status role="alert">The dashboard could not reach the service. Reload to try again.</Status>;
  // Signed out: sign in, then back to the page asked for (see returnPath).
  if (!me.data) {
    if (route === '/sign-in') return <SignInPage />;
    const asked = `${route}${search.size > 0 ? `?${search}` : ''}`;
    return <Redirect to={route === '/' ? '/sign-in' : `/sign-in?next=${encodeURIComponent(asked)}`} />;
  }
  if (!page) return <Redirect to={route === '/sign-in' ? returnPath(search.get('next'), HOME) : HOME} />;
  return (
    <PageTitleContext.Provider value={setNamed}>
      <Layout email={me.data.email} title={title ?? page.title}>
        <page.Page />
      </Layout>
    </PageTitleContext.Provider>
  );
}
