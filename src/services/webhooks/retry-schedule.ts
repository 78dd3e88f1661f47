// When the next attempt goes, after `failedAttempts` failures: 5 s, 30 s, 2 min, 10 min, 1 h,
// 4 h, then every 12 h, each +-10 % of jitter so that a receiver back from an outage is not hit
// by every delivery at once.
const STEPS_MS = [5_000, 30_000, 120_000, 600_000, 3_600_000, 14_400_000];
const THEN_EVERY_MS = 43_200_000;
export const JITTER = 0.1;

export function retryDelayMs(failedAttempts: number, random: () => number = Math.random): number {
  const base = STEPS_MS[failedAttempts - 1] ?? THEN_EVERY_MS;
  return Math.round(base * (1 - JITTER + 2 * JITTER * random()));
}

export function baseRetryDelayMs(failedAttempts: number): number {
  return STEPS_MS[failedAttempts - 1] ?? THEN_EVERY_MS;
}

// An endpoint failing for this long without one success is disabled.
export const DISABLE_AFTER_MS = 3 * 24 * 3_600_000;
