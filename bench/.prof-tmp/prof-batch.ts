import autocannon from 'autocannon';
import { createBenchAccount } from '/work/wt/leansql/bench/lib/fixture';
const url = process.env.URL!;
const base = process.env.BASE!;
const path = process.env.WHAT ?? 'batch';
(async () => {
  const acct = await createBenchAccount(url, 'prof ' + Date.now());
  let n = 0;
  const tag = Date.now().toString(36);
  const r = await autocannon({
    url: base, connections: 4, duration: Number(process.env.SECS ?? 8),
    headers: { 'x-api-key': acct.key, 'content-type': 'application/json' },
    requests: [{ method: 'POST', setupRequest: (req) => {
      const contacts = Array.from({ length: 100 }, (_, i) => ({ email: `p${n}-${i}-${tag}@bench.test`, firstName: 'Ada', tags: ['x'], customFields: { a: 1 } }));
      n++;
      return { ...req, path: '/api/v1/contacts/batch', body: JSON.stringify({ contacts }) };
    } }],
  });
  console.log('req/s', r.requests.average, 'non2xx', r.non2xx);
  await acct.close();
})();
