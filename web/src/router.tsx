import { useEffect, useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from 'react';

// A small history router: the app has a handful of pages, not worth a routing library's bytes.
export const BASE = '/dashboard';
export const HOME = '/contacts';
export const PRODUCT = 'Contacts & Sequences';

function subscribe(onChange: () => void) {
  window.addEventListener('popstate', onChange);
  return () => window.removeEventListener('popstate', onChange);
}

export function useLocation() {
  const path = useSyncExternalStore(subscribe, () => window.location.pathname);
  const search = useSyncExternalStore(subscribe, () => window.location.search);
  const route = path.startsWith(BASE) ? path.slice(BASE.length) || '/' : path;
  return { route: route.replace(/\/+$/, '') || '/', search: new URLSearchParams(search) };
}

export function navigate(route: string, { replace = false } = {}) {
  const url = `${BASE}${route}`;
  if (replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

export function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

export function Link({ to, ...props }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return <a href={`${BASE}${to}`} onClick={onClick} {...props} />;
}

// Where sign-in returns to: a path of this app, as the redirect to sign-in wrote it, or the
// fallback. Anything else (another site, "//host", a scheme, a backslash that browsers read as
// a slash) is ignored, so a link to sign-in cannot send a person elsewhere afterwards.
export function returnPath(next: string | null, fallback: string): string {
  if (!next || !/^\/(?![/\\])/.test(next) || /[\\\u0000-\u001f]/.test(next)) return fallback;
  const url = new URL(`${BASE}${next}`, window.location.origin);
  if (url.origin !== window.location.origin || !url.pathname.startsWith(`${BASE}/`)) return fallback;
  const route = url.pathname.slice(BASE.length);
  return route === '/sign-in' || route === '/setup' ? fallback : `${route}${url.search}`;
}
