import { boundedGet } from './bounded-get';
import { isSnsUrl } from './sns-signature';

// An SNS subscription is confirmed by a GET of the SubscribeURL its signed
// SubscriptionConfirmation carries: an SNS host only (checked again here), 5 s and 64 KiB at most.
export type SubscriptionConfirmer = (url: string) => Promise<void>;

export const confirmSnsSubscription: SubscriptionConfirmer = async (url) => {
  if (!isSnsUrl(url)) throw new Error('SubscribeURL is not an SNS host');
  const { status } = await boundedGet(url, { timeoutMs: 5_000, maxBytes: 64 * 1024 });
  if (status !== 200) throw new Error(`SNS answered ${status} to the subscription's confirmation`);
};
