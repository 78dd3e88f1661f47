import type { Locator, Page } from 'playwright-core';

// The sequence builder as its browser tests find it: the Builder region, its step cards by
// place, and what an input's aria-describedby points at.

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
