import { ItemPage } from '../../components/item-page';
import { usePageTitle } from '../../components/page-title';
import { useContact } from './contact-panels/contact';
import { ActivitiesPanel } from './contact-panels/activities-panel';
import { DeletePanel } from './contact-panels/delete-panel';
import { FieldsPanel } from './contact-panels/fields-panel';
import { RunsPanel } from './contact-panels/runs-panel';
import { SubscriptionsPanel } from './contact-panels/subscriptions-panel';
import { TagsPanel } from './contact-panels/tags-panel';

const LIST = { to: '/contacts', label: 'Contacts' };

// A contact by its name, else its email.
function contactName(contact: { email: string; firstName: string | null; lastName: string | null }): string {
  return [contact.firstName, contact.lastName].filter(Boolean).join(' ') || contact.email;
}

export function ContactPage({ id }: { id: string }) {
  const query = useContact(id);
  usePageTitle(query.data && contactName(query.data.contact));
  return (
    <ItemPage query={query} loading="Loading the contact…" list={LIST} crumb={({ contact }) => <span className="mono">{contact.email}</span>}>
      {({ contact }) => (
        <>
          <div className="panels">
            <FieldsPanel contact={contact} key={contact.id} />
            <div>
              <TagsPanel contact={contact} />
              <SubscriptionsPanel contact={contact} key={contact.updatedAt} />
            </div>
          </div>
          <RunsPanel contact={contact} />
          <ActivitiesPanel contact={contact} />
          <DeletePanel contact={contact} />
        </>
      )}
    </ItemPage>
  );
}
