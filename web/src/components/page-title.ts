import { createContext, useContext, useEffect } from 'react';
import { useLocation } from '../router';

export type NamedPage = { route: string; title: string };

export const PageTitleContext = createContext<(named: NamedPage | null) => void>(() => undefined);

// Names the page in its heading and the browser's title (a contact by its name): for this
// route only, so the next page starts from its own kind.
export function usePageTitle(title: string | undefined) {
  const setNamed = useContext(PageTitleContext);
  const { route } = useLocation();
  useEffect(() => {
    if (title) setNamed({ route, title });
  }, [setNamed, route, title]);
}
