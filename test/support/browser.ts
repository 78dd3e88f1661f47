import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { expect } from 'chai';
import { chromium, type Browser, type Page } from 'playwright-core';

// The dashboard's browser tests: Debian's headless chromium, axe on every page, screenshots
// into SCREENSHOT_DIR (CI keeps it beside its logs) or a temporary directory, per database.

export const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const DB_LABEL = (process.env.TEST_DATABASE_URL ?? 'sqlite').split(':')[0];
export const SHOTS = process.env.SCREENSHOT_DIR ? path.join(process.env.SCREENSHOT_DIR, DB_LABEL) : path.join(os.tmpdir(), `dashboard-screenshots-${DB_LABEL}`);

// A suite's title, saying why it skips where chromium is missing.
export function browserSuite(title: string): string {
  return fs.existsSync(CHROMIUM) ? title : `${title} (skipped: no ${CHROMIUM} here; apt-get install chromium, as .ci/run does)`;
}

// Chromium, or the suite skipped without it (failed under CI, where it must be there).
export async function launchBrowser(suite: Mocha.Context): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) {
    if (process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium package`);
    suite.skip();
  }
  fs.mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

export async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

// No serious or critical axe violation on the page as it stands. Frames that may run no script
// (sandbox="": an email as sent, a preview) are left out: what they show is a customer's message,
// not the dashboard, and axe cannot run in them (its evaluation there never answers).
export async function expectAccessible(page: Page, what: string): Promise<void> {
  const results = await new AxeBuilder({ page }).exclude('iframe[sandbox=""]').analyze();
  const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`), what).to.deep.equal([]);
}

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

// A view checked as the issues ask of every page: axe, no page wider than the screen, and a
// screenshot, at 1280x800 and at 390x844 (name-phone.png); the page is left at desktop width.
export async function lookAtBothWidths(page: Page, name: string): Promise<void> {
  for (const [suffix, viewport] of [['', DESKTOP], ['-phone', PHONE]] as const) {
    await page.setViewportSize(viewport);
    // A frame laid out again at the new width paints a moment later.
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    await expectAccessible(page, `${name}${suffix}`);
    const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.scrollingElement!.scrollWidth, innerWidth: window.innerWidth }));
    expect(scrollWidth, `${name}${suffix}: document width`).to.be.at.most(innerWidth);
    await shoot(page, `${name}${suffix}`);
  }
  await page.setViewportSize(DESKTOP);
}
