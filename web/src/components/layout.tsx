import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type KeyboardEvent, type ReactNode } from 'react';
import { Link, navigate, PRODUCT, useLocation } from '../router';
import { trpc } from '../trpc';

const NAV = [
  { to: '/contacts', label: 'Contacts', section: 'Audience' },
  { to: '/suppressions', label: 'Suppressions', section: 'Audience' },
  { to: '/sequences', label: 'Sequences', section: 'Automation' },
  { to: '/settings/developer/api-keys', label: 'API keys', section: 'Settings · Developer' },
  { to: '/settings/developer/webhooks', label: 'Webhooks', section: 'Settings · Developer' },
  { to: '/settings/channels', label: 'Channels', section: 'Settings' },
  { to: '/account', label: 'Account', section: 'Settings' },
];

export function Layout({ email, title, children }: { email: string; title: string; children: ReactNode }) {
  const { route } = useLocation();
  // On a narrow screen the menu is a disclosure: closed on every new page.
  const [menu, setMenu] = useState({ open: false, route });
  const menuOpen = menu.open && menu.route === route;
  const closeOnEscape = (event: KeyboardEvent) => {
    if (event.key !== 'Escape' || !menuOpen) return;
    setMenu({ open: false, route });
    document.getElementById('menu-button')?.focus();
  };
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
    // Escape closes the open menu from wherever focus is in the page.
    <div className="shell" onKeyDown={closeOnEscape}>
      <a className="skip" href="#content">
        Skip to content
      </a>
      <header className="topbar">
        <button
          type="button"
          id="menu-button"
          className="secondary menu-button"
          aria-expanded={menuOpen}
          aria-controls="main-nav"
          onClick={() => setMenu({ open: !menuOpen, route })}
        >
          Menu
        </button>
        <span className="brand">{PRODUCT}</span>
        <span className="who">{email}</span>
        <button type="button" className="secondary" onClick={() => signOut.mutate()} disabled={signOut.isPending}>
          Sign out
        </button>
      </header>
      <nav id="main-nav" className={menuOpen ? 'sidebar open' : 'sidebar'} aria-label="Main">
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
