// The example a new account's empty Sequences list offers (docs/dashboard.md): a welcome email,
// then two days later a nudge to whoever has not bought yet. Created in draft through the same
// create procedure as any sequence, so the service checks it like any other.
export const EXAMPLE_SEQUENCE = {
  name: 'Welcome',
  status: 'draft' as const,
  steps: [
    { id: 'settle-in', type: 'wait' as const, duration: 'PT1H' },
    {
      id: 'welcome-email',
      type: 'email' as const,
      subject: 'Welcome, {{ contact.firstName | default: "friend" }}',
      html:
        '<p>Hello {{ contact.firstName | default: "there" }},</p>\n<p>Thanks for joining us. Here is what to try first.</p>\n' +
        '<p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>',
    },
    { id: 'two-days', type: 'wait' as const, duration: 'P2D' },
    { id: 'bought', type: 'branch' as const, if: { tag: 'customer' }, then: 'done', else: 'nudge-email' },
    {
      id: 'nudge-email',
      type: 'email' as const,
      subject: 'Still thinking it over?',
      html: '<p>Hello {{ contact.firstName | default: "there" }},</p>\n<p>Here is 10% off your first order.</p>\n<p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>',
    },
    // The branch's other path: contacts who already bought end here.
    { id: 'done', type: 'exit' as const },
  ],
  exitWhen: [{ unsubscribed: 'email' as const }],
};
