import type { inferRouterInputs } from '@trpc/server';
import type { AppRouter } from '../../../../src/routers/app-router';

// The types the message editor's parts share (the editor, its preview, its test send), in a
// module of their own so that none of those parts imports another for a type.

type StepInput = NonNullable<inferRouterInputs<AppRouter>['dashboard']['messages']['preview']['step']>;
export type MessageStepInput = Extract<StepInput, { type: 'email' } | { type: 'whatsapp' }>;
export type EmailStep = Extract<StepInput, { type: 'email' }>;
export type WhatsAppStep = Extract<StepInput, { type: 'whatsapp' }>;

// The contact a preview (and a test send) is rendered for.
export type PreviewContact = { id: string; email: string; customFields: Record<string, unknown> };
