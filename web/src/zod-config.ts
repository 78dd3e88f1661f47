import { config } from 'zod';

// The page's CSP allows no eval (src/http/dashboard-page.ts), and zod, before its first parse,
// probes for it with Function(''): the probe is caught, but the browser still reports a CSP
// violation in red on every page that validates. jitless tells zod not to probe (and not to
// compile its parsers), so devtools stay clean. Imported first by main.tsx, before any schema
// is used; the builder's schemas arrive later, in their own chunk.
config({ jitless: true });
