import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Link, navigate, useLocation } from '../router';
import { trpc } from '../trpc';

const NAV = [
  { to: '/contacts', label: 'Contacts', section: 'Audience' },
  { to: '/sequences', label: 'Sequences', section: 'Automation' },
  { to: '/settings/developer/api-keys', label: 'API keys', section: 'Settings · Developer' },
  { to: '/settings/developer/webhooks', label: 'Webhooks', section: 'Settings · Developer' },
  { to: '/account', label: 'Account', section: 'Settings' },
];

export function Layout({ email, title, children }: { email: string; title: string; children: ReactNode }) {
  const { route } = useLocation();
  const queryClient = useQueryClient();
  const signOut = useMutation(
    trpc.dashboard.auth.signOut.mutationOptions({
      onSuccess: () => {
        queryClient.clear();
        queryClient.setQueryData(trpc.dashboard.auth.me.queryKey(), null);
        navigate('/sign-in', { replace: true });
      },
    }),
  );
  return (
    <div className="shell">
      <a className="skip" href="#content">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">Contacts &amp; Sequences</span>
        <span className="who">{email}</span>
        <button type="button" className="secondary" onClick={() => signOut.mutate()} disabled={signOut.isPending}>
          Sign out
        </button>
      </header>
      <nav className="sidebar" aria-label="Main">
        <ul>
          {NAV.map((item, index) => (
            <li key={item.to}>
              {NAV[index - 1]?.section !== item.section && <span className="section">{item.section}</span>}
              <Link to={item.to} aria-current={route === item.to ? 'page' : route.startsWith(`${item.to}/`) ? 'location' : undefined}>
                {item.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="content" className="content" tabIndex={-1}>
        <h1>{title}</h1>
        {children}
      </main>
    </div>
  );
}
