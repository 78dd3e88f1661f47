// The driver's own requests besides autocannon's: one POST at a time (the probes), and a paced
// stream of batches in the background (traffic beside the probes), both with fetch's keep-alive.

export interface Poster {
  // Resolves when the answer's status line and headers have arrived (the 202's arrival), with
  // Date.now() then: the clock the engine's started_at is written with (same machine).
  post(path: string, body: unknown): Promise<{ status: number; arrivedAt: number; body: string }>;
}

export function poster(base: string, apiKey: string): Poster {
  return {
    async post(path, body) {
      const response = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const arrivedAt = Date.now();
      return { status: response.status, arrivedAt, body: await response.text() };
    },
  };
}

export interface Background {
  stop(): Promise<{ batches: number; activities: number; seconds: number; wrong: number; late: number }>;
}

// Batches of `size` at `perSecond` activities a second, at most `inFlight` at once (a batch
// whose slot is not free when due is skipped and counted as late: the server did not keep up).
export function pacedBatches(client: Poster, makeBatch: () => unknown[], perSecond: number, inFlight = 4): Background {
  const started = performance.now();
  let batches = 0;
  let activities = 0;
  let wrong = 0;
  let late = 0;
  let open = 0;
  let stopped = false;
  const pending = new Set<Promise<void>>();
  const sample = makeBatch();
  const intervalMs = (1000 * sample.length) / perSecond;
  let next = performance.now();
  const tick = () => {
    if (stopped) return;
    const now = performance.now();
    while (next <= now) {
      next += intervalMs;
      if (open >= inFlight) {
        late += 1;
        continue;
      }
      open += 1;
      const items = makeBatch();
      const sent = client
        .post('/api/v1/activities/batch', { activities: items })
        .then(({ status }) => {
          if (status === 202) {
            batches += 1;
            activities += items.length;
          } else wrong += 1;
        })
        .catch(() => void (wrong += 1))
        .finally(() => {
          open -= 1;
          pending.delete(sent);
        });
      pending.add(sent);
    }
    timer = setTimeout(tick, Math.max(1, next - performance.now()));
  };
  let timer = setTimeout(tick, 0);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await Promise.all(pending);
      return { batches, activities, seconds: (performance.now() - started) / 1000, wrong, late };
    },
  };
}
