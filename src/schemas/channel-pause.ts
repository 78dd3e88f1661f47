import { z } from 'zod';
import { MESSAGE_CHANNELS } from './message';

// A paused channel, or one step's paused template (docs/channels.md "What pauses a channel, and
// how it resumes"): GET /channels/pauses and the dashboard's banners.

export const channelPauseSchema = z
  .object({
    channel: z.enum(MESSAGE_CHANNELS),
    code: z.string().describe('What the sender side refused, as a short key.').meta({ example: 'smtp_auth_failed' }),
    reason: z.string().describe('The failure in our words, with its code (never the remote server\'s banner).').meta({ example: 'smtp auth failed (535 5.7.8)' }),
    sequenceId: z.string().nullable().describe('Set when only one step\'s template is paused: its sequence.').meta({ example: null }),
    stepId: z.string().nullable().describe('Set when only one step\'s template is paused: that step.').meta({ example: null }),
    pausedAt: z.string().describe('ISO 8601 UTC with milliseconds.').meta({ example: '2026-12-01T09:30:00.000Z' }),
    nextProbeAt: z
      .string()
      .nullable()
      .describe('When a login with no message is next tried (it resumes the channel when it succeeds); null for a template pause, which waits for its step to be saved.')
      .meta({ example: '2026-12-01T09:30:05.000Z' }),
  })
  .meta({ id: 'ChannelPause' });

export const channelPausesQuerySchema = z.strictObject({
  channel: z.enum(MESSAGE_CHANNELS).optional().describe('Only this channel\'s pauses.'),
});
