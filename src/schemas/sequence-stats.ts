import { z } from 'zod';

// GET /sequences/{id}/stats (docs/analytics.md): a sequence's per-step funnel and its days.

const DAYS_PROBLEM = 'days must be a whole number from 1 to 90';
const count = (description: string, example: number) => z.number().int().describe(description).meta({ example });
const byReason = (description: string) =>
  z
    .record(z.string(), z.number().int())
    .describe(
      `${description} Reasons: exit_rule, unenrolled, step_failed, step_missing, contact_deleted, a message step's skip ` +
        '(unsubscribed, no_email, no_phone, invalid_phone), or the status a run was ended in from outside (cancelled, failed, completed).',
    )
    .meta({ example: { exit_rule: 3, unenrolled: 1 } });

export const statsDaysSchema = z
  .number({ error: DAYS_PROBLEM })
  .int(DAYS_PROBLEM)
  .min(1, DAYS_PROBLEM)
  .max(90, DAYS_PROBLEM)
  .default(30)
  .describe('How many UTC days, today included, 1 to 90 (default 30).');

export const stepStatsSchema = z.object({
  stepId: z.string().describe('The step id.').meta({ example: 'welcome-email' }),
  type: z.string().describe('The step type (that of the latest version that has the step; `unknown` if none has it).').meta({ example: 'email' }),
  reached: count('Runs that arrived at the step in the window (enrolled at it, moved on to it, or moved to it).', 120),
  completed: count('Runs whose step succeeded in the window.', 110),
  skipped: byReason('Runs that left the step without doing it in the window (ended from outside while at it, or a message step skipped), by reason.'),
  failed: count('Runs that failed at the step in the window.', 2),
  bounced: count('The step\'s messages that bounced in the window (a hard bounce, at once or reported later): messages, not runs.', 1),
  complained: count('The step\'s messages reported as spam in the window: messages, not runs.', 0),
  waiting: count('Active runs (pending, running, paused) at the step now, whatever the window.', 4),
});

export const dayStatsSchema = z.object({
  date: z.string().describe('The UTC day, YYYY-MM-DD.').meta({ example: '2026-12-23' }),
  enrollments: count('Runs started.', 40),
  completions: count('Runs completed.', 31),
  exits: byReason('Runs that ended otherwise (cancelled or failed), by reason.'),
  messages: z
    .object({
      sent: count('Messages sent (or captured, without a provider).', 38),
      delivered: count('Messages delivered.', 36),
      read: count('Messages read.', 12),
      failed: count('Messages failed (bounced ones are counted apart).', 1),
      bounced: count('Messages bounced: refused for good by the receiving server, at once or by a later bounce report.', 1),
      complained: count('Messages the recipient reported as spam (a feedback loop, SES, SendGrid).', 0),
    })
    .describe('The sequence\'s messages that reached each status that day: each status counted once per message, on the day it was reached.'),
});

// Read from the runs and their executions at the time of the read (not projected): docs/analytics.md.
export const conversionStatsSchema = z
  .object({
    total: count('Runs that converted in the window: completed with reason `goal_met` (their contact met the sequence\'s goal).', 18),
    days: z
      .array(
        z.object({
          date: z.string().describe('The UTC day, YYYY-MM-DD.').meta({ example: '2026-12-23' }),
          conversions: count('Runs that converted that day (the UTC day of their completedAt).', 3),
        }),
      )
      .describe('Every day of the window, oldest first.'),
    steps: z
      .array(
        z.object({
          stepId: z.string().describe('The step id.').meta({ example: 'welcome-email' }),
          converted: count('Runs that converted in the window after reaching the step (it has an execution at the step, the step it converted at included).', 12),
        }),
      )
      .describe('The steps of `steps`, in that order, then any other step a converted run reached.'),
  })
  .describe('The sequence\'s conversions: runs completed because their contact met its goal.');

export const variantStatsSchema = z.object({
  stepId: z.string().describe('The split step\'s id.').meta({ example: 'subject-test' }),
  variant: z.string().describe('The variant\'s id.').meta({ example: 'a' }),
  reached: count('Runs that took the variant in the window (the split\'s execution recorded it).', 60),
  converted: count('Of those, the runs that have converted (by the time of the read).', 9),
});

export const waitStatsSchema = z.object({
  stepId: z.string().describe('The wait_for step\'s id.').meta({ example: 'wait-checkout' }),
  matched: count('Waits that ended in the window because a matching activity came.', 40),
  timedOut: count('Waits that ended in the window at their timeout.', 25),
});

export const sequenceStatsSchema = z.object({
  from: z.string().describe('The first UTC day of the window, YYYY-MM-DD.').meta({ example: '2026-11-24' }),
  to: z.string().describe('The last UTC day of the window (today), YYYY-MM-DD.').meta({ example: '2026-12-23' }),
  steps: z.array(stepStatsSchema).describe('The current version\'s steps in order, then steps of older versions with figures in the window or runs waiting at them.'),
  days: z.array(dayStatsSchema).describe('Every day of the window, oldest first.'),
  conversions: conversionStatsSchema,
  variants: z
    .array(variantStatsSchema)
    .describe('Per split step and variant: the current version\'s variants (each, with or without runs), then any other with runs in the window. Empty without split steps.'),
  waits: z
    .array(waitStatsSchema)
    .describe('Per wait_for step, how its waits ended: the current version\'s wait_for steps, then older ones with waits ended in the window. Empty without wait_for steps.'),
  asOf: z
    .string()
    .describe(
      'How fresh the figures are: every change committed before this time is counted. The counters are projected from the run log; ' +
        'a read first applies what was committed before it, so this is normally the time of the read, and older only when that took longer than 2 s. ' +
        '`conversions`, `variants` and `waits` are read directly, as of the read.',
    )
    .meta({ example: '2026-12-23T10:15:00.000Z' }),
});
