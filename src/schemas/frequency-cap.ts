import { z } from 'zod';

// A channel's frequency cap (docs/channels.md "Frequency caps"): at most `max` marketing
// messages per contact within any rolling `per`, across every sequence of the account, on
// PUT and GET /channels/email and /channels/whatsapp. `per` is checked as an ISO 8601 duration
// by the service (src/services/channels/frequency-caps.ts), with the wait step's bounds.

export const WHEN_CAPPED = ['wait', 'skip'] as const;
export type WhenCapped = (typeof WHEN_CAPPED)[number];

// The most a cap may allow per window: above it a cap would never bite.
export const MAX_FREQUENCY_CAP = 10_000;

const shape = {
  max: z
    .number()
    .int('must be a whole number')
    .positive('must be at least 1')
    .max(MAX_FREQUENCY_CAP, `must be at most ${MAX_FREQUENCY_CAP}`)
    .describe('At most this many marketing messages per contact within any rolling `per`, counted across all the account\'s sequences.')
    .meta({ example: 3 }),
  per: z
    .string()
    .max(32)
    .describe(
      'The rolling window, an ISO 8601 duration from PT1S to 366 days (P1D, PT12H, P1W). Counted back from the moment a message is ' +
        'about to be queued, in elapsed time (a day is 24 hours, a month 30 days).',
    )
    .meta({ example: 'P1D' }),
  whenCapped: z
    .enum(WHEN_CAPPED)
    .describe(
      '`wait`: the capped message waits until the window allows it (the run shows `waitingFor: "frequency_cap"` and `dueAt`); ' +
        '`skip`: its step is skipped with reason `frequency_capped` and the run goes on to its next step.',
    )
    .meta({ example: 'wait' }),
};

export const frequencyCapInputSchema = z
  .strictObject(shape)
  .describe('At most `max` marketing messages per contact per rolling `per` on this channel. Null: no cap. Left out: the stored cap is kept.');
export type FrequencyCapInput = z.infer<typeof frequencyCapInputSchema>;

export const frequencyCapSchema = z
  .object(shape)
  .nullable()
  .describe('The channel\'s frequency cap (transactional steps are neither counted nor capped); null: none.')
  .meta({ id: 'FrequencyCap' });
export type FrequencyCapDto = z.infer<typeof frequencyCapSchema>;
