import { useQuery, useQueryClient } from '@tanstack/react-query';
import { trpc } from '../../../trpc';

export type Contact = NonNullable<ReturnType<typeof useContact>['data']>['contact'];
export type Subscription = Contact['emailSubscriptionStatus'];

export function useContact(id: string) {
  return useQuery(trpc.dashboard.contacts.get.queryOptions({ id }));
}

// Every change answers with the contact as stored: put it in the cache, and refresh the lists.
export function useContactWrite() {
  const queryClient = useQueryClient();
  return (contact: Contact) => {
    queryClient.setQueryData(trpc.dashboard.contacts.get.queryKey({ id: contact.id }), { contact });
    void queryClient.invalidateQueries({ queryKey: trpc.dashboard.contacts.list.queryKey() });
  };
}
