import { ItemPage } from '../../components/item-page';
import { useContact } from './contact-panels/contact';
import { DeletePanel } from './contact-panels/delete-panel';
import { FieldsPanel } from './contact-panels/fields-panel';
import { RunsPanel } from './contact-panels/runs-panel';
import { SubscriptionsPanel } from './contact-panels/subscriptions-panel';
import { TagsPanel } from './contact-panels/tags-panel';

const LIST = { to: '/contacts', label: 'Contacts' };

export function ContactPage({ id }: { id: string }) {
  return (
    <ItemPage query={useContact(id)} loading="Loading the contact…" list={LIST} crumb={({ contact }) => <span className="mono">{contact.email}</span>}>
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
          <DeletePanel contact={contact} />
        </>
      )}
    </ItemPage>
  );
}
