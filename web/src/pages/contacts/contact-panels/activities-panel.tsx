import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Pager } from '../../../components/pager';
import { QueryState } from '../../../components/query-state';
import { Table } from '../../../components/table';
import { useCursorPages } from '../../../components/use-cursor-pages';
import { When } from '../../../components/when';
import { trpc } from '../../../trpc';
import type { Contact } from './contact';

const COLUMNS = ['Activity', 'Occurred', 'Properties', 'Id'];

// What the contact did, as the account's systems posted it (POST /activities), newest first:
// the API's list, page by page. Properties are shown as the JSON they were sent as.
export function ActivitiesPanel({ contact }: { contact: Contact }) {
  const pages = useCursorPages(contact.id);
  const activities = useQuery({
    ...trpc.dashboard.contacts.activities.queryOptions({ id: contact.id, limit: 20, cursor: pages.cursor }),
    placeholderData: keepPreviousData,
  });
  return (
    <section className="panel" aria-labelledby="activities-heading">
      <h2 id="activities-heading">Activities</h2>
      <QueryState
        query={activities}
        loading="Loading activities…"
        isEmpty={(data) => data.activities.length === 0}
        empty="No activities yet: POST /api/v1/activities records what this contact does."
      >
        {(data) => (
          <>
            <Table caption="Activities of this contact, newest first" columns={COLUMNS}>
              {data.activities.map((activity) => (
                <tr key={activity.id}>
                  <th scope="row">
                    <code>{activity.name}</code>
                  </th>
                  <td>
                    <When iso={activity.occurredAt} />
                  </td>
                  <td className="activity-properties">
                    <code>{Object.keys(activity.properties).length === 0 ? '{}' : JSON.stringify(activity.properties)}</code>
                  </td>
                  <td className="activity-id">
                    <code>{activity.id}</code>
                  </td>
                </tr>
              ))}
            </Table>
            <Pager pages={pages} nextCursor={data.nextCursor} label="Activities" />
          </>
        )}
      </QueryState>
    </section>
  );
}
