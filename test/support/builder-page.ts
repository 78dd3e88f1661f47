import type { Locator, Page } from 'playwright-core';
import type { SequenceDto } from '../../src/schemas/sequence';
import { signInAt, type DashboardHarness } from './browser';
import { buildDashboardTenant } from './dashboard';

// The sequence builder as its browser tests find it: the Builder region, its step cards by
// place, and what an input's aria-describedby points at; and the start most of its tests share.

// A new account with a dashboard user and a sequence of `definition`, made through the REST API
// as an integration makes it, and `page` signed in at the sequence's page.
export async function atNewSequence(dashboard: DashboardHarness, page: Page, definition: Record<string, unknown>) {
  const { account, user, key } = await buildDashboardTenant();
  const created = await dashboard.rest(key, 'POST', '/sequences', definition);
  if (created.status !== 201) throw new Error(`POST /sequences answered ${created.status}: ${JSON.stringify(created.body)}`);
  const sequence = created.body.sequence as SequenceDto;
  await signInAt(page, `${dashboard.base}/dashboard/sequences/${sequence.id}`, user.email);
  return { tenant: { accountId: account.id, key }, user, sequence };
}

export const builderOf = (page: Page): Locator => page.getByRole('region', { name: 'Builder' });
export const cardOf = (page: Page, n: number): Locator => builderOf(page).locator('.flow-step').nth(n - 1);

// The texts an input's aria-describedby points at: its hint and the error beside it.
export async function describedBy(input: Locator): Promise<string> {
  return input.evaluate((el) =>
    (el.getAttribute('aria-describedby') ?? '')
      .split(' ')
      .filter(Boolean)
      .map((id) => document.getElementById(id)?.textContent ?? '')
      .join(' | '),
  );
}
