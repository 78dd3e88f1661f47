import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ErrorBanner } from '../../../components/error-banner';
import { SelectField } from '../../../components/select-field';
import { fieldErrors, trpc } from '../../../trpc';
import { useContactWrite, type Contact, type Subscription } from './contact';

const SUBSCRIPTION = [
  ['subscribed', 'Subscribed'],
  ['unsubscribed', 'Unsubscribed'],
] as const;

export function SubscriptionsPanel({ contact }: { contact: Contact }) {
  const written = useContactWrite();
  const [email, setEmail] = useState<Subscription>(contact.emailSubscriptionStatus);
  const [whatsapp, setWhatsapp] = useState<Subscription>(contact.whatsappSubscriptionStatus);
  const update = useMutation(trpc.dashboard.contacts.updateSubscriptions.mutationOptions({ onSuccess: ({ contact }) => written(contact) }));
  const errors = fieldErrors(update.error);
  const unchanged = email === contact.emailSubscriptionStatus && whatsapp === contact.whatsappSubscriptionStatus;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    update.mutate({ id: contact.id, emailSubscriptionStatus: email, whatsappSubscriptionStatus: whatsapp });
  };
  return (
    <section className="panel" aria-labelledby="subscriptions-heading">
      <h2 id="subscriptions-heading">Subscriptions</h2>
      <form onSubmit={submit} noValidate>
        <ErrorBanner error={update.error} />
        <SelectField label="Email subscription" options={SUBSCRIPTION} value={email} error={errors.emailSubscriptionStatus} onChange={(e) => setEmail(e.target.value as Subscription)} />
        <SelectField
          label="WhatsApp subscription"
          options={SUBSCRIPTION}
          value={whatsapp}
          error={errors.whatsappSubscriptionStatus}
          onChange={(e) => setWhatsapp(e.target.value as Subscription)}
        />
        <button type="submit" disabled={update.isPending || unchanged}>
          Save subscriptions
        </button>
      </form>
    </section>
  );
}
