import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Server } from 'node:http';
import AxeBuilder from '@axe-core/playwright';
import { expect } from 'chai';
import type { Express } from 'express';
import { createApp, type AppDeps } from '../../src/app';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { silentLogger } from './app';
import { PASSWORD } from './dashboard';
import { testDb } from './db';
import { closeServer, listenOnLoopback } from './listen';

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

// The document is no wider than the window; if it is, the message names the last elements that
// stick out (a table scrolls in its .table-wrap on purpose, and is left out).
export async function expectNoSidewaysScroll(page: Page, what: string): Promise<void> {
  const { scrollWidth, innerWidth, sticking } = await page.evaluate(() => ({
    scrollWidth: document.scrollingElement!.scrollWidth,
    innerWidth: window.innerWidth,
    sticking: [...document.querySelectorAll('body *')]
      .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 0.5 && !el.parentElement!.closest('.table-wrap, .visually-hidden'))
      .slice(-3)
      .map((el) => `${el.tagName.toLowerCase()}.${el.className} ${el.getBoundingClientRect().width}`),
  }));
  expect(scrollWidth, `${what}: document width at ${innerWidth} px (${sticking.join(', ')})`).to.be.at.most(innerWidth);
}

// A frame laid out again at a new width paints a moment later.
async function nextPaint(page: Page): Promise<void> {
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
}

// A view checked as the issues ask of every page: axe, no page wider than the screen, and a
// screenshot, at 1280x800 and at 390x844 (name-phone.png); the page is left at desktop width.
export async function lookAtBothWidths(page: Page, name: string): Promise<void> {
  for (const [suffix, viewport] of [['', DESKTOP], ['-phone', PHONE]] as const) {
    await page.setViewportSize(viewport);
    await nextPaint(page);
    await expectAccessible(page, `${name}${suffix}`);
    await expectNoSidewaysScroll(page, `${name}${suffix}`);
    await shoot(page, `${name}${suffix}`);
  }
  await page.setViewportSize(DESKTOP);
}

// A part of the page photographed close up at both widths, beside the whole page's shots.
export async function closeUp(page: Page, part: Locator, name: string): Promise<void> {
  for (const [suffix, viewport] of [['', DESKTOP], ['-phone', PHONE]] as const) {
    await page.setViewportSize(viewport);
    await nextPaint(page);
    await part.screenshot({ path: path.join(SHOTS, `${name}${suffix}.png`) });
  }
  await page.setViewportSize(DESKTOP);
}

// Signs in on the sign-in page the browser is on (a page that needs a session shows it).
export async function signInHere(page: Page, email: string, password = PASSWORD): Promise<void> {
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

// Opens a dashboard address and signs in there; the dashboard then shows that address.
export async function signInAt(page: Page, url: string, email: string, password = PASSWORD): Promise<void> {
  await page.goto(url);
  await signInHere(page, email, password);
}

export interface DashboardHarness {
  browser: Browser;
  server: Server;
  // http://127.0.0.1:<port>, the app's address on loopback.
  base: string;
  // A fresh context (no cookies) at desktop width, and its page; closed after each test.
  newPage(viewport?: { width: number; height: number }): Promise<Page>;
  // The REST API with an account's key, as an integration calls it.
  rest(key: string, method: string, route: string, body?: unknown): Promise<{ status: number; body: any }>;
}

// The set-up every browser suite shares: chromium (or the suite skipped where it is missing),
// the app served on loopback, a fresh browser context per page, all closed after. Call it in a
// describe(); its fields are set once the suite's before() has run.
export function serveDashboard(makeApp: () => Express | Promise<Express>): DashboardHarness {
  const contexts: BrowserContext[] = [];
  const harness = {
    async newPage(viewport = DESKTOP) {
      const context = await harness.browser.newContext({ viewport });
      contexts.push(context);
      return context.newPage();
    },
    async rest(key: string, method: string, route: string, body?: unknown) {
      const res = await fetch(`${harness.base}/api/v1${route}`, {
        method,
        headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
  } as DashboardHarness;
  before(async function () {
    harness.browser = await launchBrowser(this);
    Object.assign(harness, await listenOnLoopback(await makeApp()));
  });
  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((context) => context.close()));
  });
  after(async () => {
    await harness.browser?.close();
    await closeServer(harness.server);
  });
  return harness;
}

// serveDashboard over the app as most suites want it: the test database, limits out of the way,
// a silent log, webhooks to loopback allowed; `extra` adds or replaces dependencies (channels).
export function serveTestDashboard(extra: Partial<AppDeps> = {}): DashboardHarness {
  return serveDashboard(() =>
    createApp({
      db: testDb(),
      config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000 },
      logger: silentLogger,
      webhooks: { allowInsecure: true, now: () => new Date() },
      ...extra,
    }),
  );
}
