import { useQuery } from '@tanstack/react-query';
import { lazy, Suspense, useEffect, useMemo, useState } from 'react';
import { Layout } from './components/layout';
import { PageTitleContext, type NamedPage } from './components/page-title';
import { Status } from './components/status';
import { AccountPage } from './pages/account';
import { ContactPage } from './pages/contacts/contact-page';
import { ContactsPage } from './pages/contacts/contacts-list';
import { ApiKeysPage } from './pages/settings/developer/api-keys';
import { WebhooksPage } from './pages/settings/developer/webhooks';
import { ChannelsPage } from './pages/settings/channels';
import { SetupPage } from './pages/setup';
import { SignInPage } from './pages/sign-in';
import { HOME, PRODUCT, Redirect, returnPath, useLocation } from './router';
import { trpc } from './trpc';

// Pages loaded when first opened (the builder, with the step schemas and zod; a run's
// timeline; the message editor): the first page stays small (test/dashboard/budget.test.ts).
const SequencesPage = lazy(() => import('./pages/sequences/sequences-list').then((module) => ({ default: module.SequencesPage })));
const SequencePage = lazy(() => import('./pages/sequences/sequence-page').then((module) => ({ default: module.SequencePage })));
const RunPage = lazy(() => import('./pages/runs/run-page').then((module) => ({ default: module.RunPage })));
const SuppressionsPage = lazy(() => import('./pages/suppressions/suppressions-list').then((module) => ({ default: module.SuppressionsPage })));
const ImportPage = lazy(() => import('./pages/contacts/import/import-page').then((module) => ({ default: module.ImportPage })));
const MessagePage = lazy(() => import('./pages/messages/message-page').then((module) => ({ default: module.MessagePage })));

// The message editor on a step of a sequence: "<sequence id>/messages/<step id>".
function MessageRoute({ id }: { id: string }) {
  const [sequenceId, , stepId] = id.split('/');
  return <MessagePage sequenceId={sequenceId!} stepId={stepId!} />;
}

const PAGES: Record<string, { title: string; Page: React.ComponentType }> = {
  '/contacts': { title: 'Contacts', Page: ContactsPage },
  // Before the contact page's /contacts/<id> (PAGES are looked up first).
  '/contacts/import': { title: 'Import contacts', Page: ImportPage },
  '/suppressions': { title: 'Suppressions', Page: SuppressionsPage },
  '/sequences': { title: 'Sequences', Page: SequencesPage },
  '/settings/developer/api-keys': { title: 'API keys', Page: ApiKeysPage },
  '/settings/developer/webhooks': { title: 'Webhooks', Page: WebhooksPage },
  '/settings/channels': { title: 'Channels', Page: ChannelsPage },
  '/account': { title: 'Account', Page: AccountPage },
};

// Pages of one thing, by its id in the path.
const ITEM_PAGES: Array<{ pattern: RegExp; title: string; Page: React.ComponentType<{ id: string }> }> = [
  { pattern: /^\/contacts\/([^/]+)$/, title: 'Contact', Page: ContactPage },
  { pattern: /^\/sequences\/([^/]+)$/, title: 'Sequence', Page: SequencePage },
  { pattern: /^\/runs\/([^/]+)$/, title: 'Run', Page: RunPage },
  { pattern: /^\/sequences\/([^/]+\/messages\/[^/]+)$/, title: 'Message', Page: MessageRoute },
];

function pageFor(route: string): { title: string; Page: React.ComponentType } | undefined {
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
        <Suspense fallback={<p role="status">Loading…</p>}>
          <page.Page />
        </Suspense>
      </Layout>
    </PageTitleContext.Provider>
  );
}
