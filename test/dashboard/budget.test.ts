import fs from 'node:fs';
import type { Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { chromium, type Browser } from 'playwright-core';
import { createApp } from '../../src/app';
import { silentLogger } from '../support/app';
import { testDb } from '../support/db';
import { buildUser, PASSWORD } from '../support/dashboard';
import { closeServer, listenOnLoopback } from '../support/listen';

// The dashboard's budget (issue 11): at most 250 KiB of gzipped JavaScript on first load, and
// the first page usable within 1 s on loopback, measured in fresh browser contexts (empty
// cache, no cookie) once the browser and the server have served one page: the best of three,
// so that a neighbour's burst of CPU on a shared machine is not counted as the app's cost.

const CHROMIUM = '/usr/bin/chromium';
const BUDGET_GZIP_BYTES = 250 * 1024;
const BUDGET_MS = 1_000;

describe(fs.existsSync(CHROMIUM) ? 'the dashboard budget' : 'the dashboard budget (skipped: no chromium)', function () {
  this.timeout(60_000);
  let browser: Browser;
  let server: Server;
  let base: string;

  before(async function () {
    if (!fs.existsSync(CHROMIUM)) {
      if (process.env.CI) throw new Error(`${CHROMIUM} is missing`);
      this.skip();
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
    ({ server, base } = await listenOnLoopback(createApp({ db: testDb(), config: { rateLimitPerMinute: 1_000_000 }, logger: silentLogger })));
  });
  after(async () => {
    await browser?.close();
    await closeServer(server);
  });

  async function firstLoad() {
    const context = await browser.newContext();
    const page = await context.newPage();
    const scripts: Promise<number>[] = [];
    page.on('response', (res) => {
      if (res.request().resourceType() === 'script') scripts.push(res.body().then((body) => gzipSync(body, { level: 9 }).length));
    });
    const started = Date.now();
    await page.goto(`${base}/dashboard`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    const ms = Date.now() - started;
    const gzipBytes = (await Promise.all(scripts)).reduce((sum, n) => sum + n, 0);
    await context.close();
    return { ms, gzipBytes, files: scripts.length };
  }

  it('loads at most 250 KiB of gzipped JavaScript and is usable within 1 s', async () => {
    const cold = await firstLoad();
    const loads = [await firstLoad(), await firstLoad(), await firstLoad()];
    const times = loads.map((load) => load.ms).sort((a, b) => a - b);

    const user = await buildUser();
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${base}/dashboard/settings/developer/api-keys`);
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    const reloadStarted = Date.now();
    await page.reload();
    await page.getByRole('button', { name: 'Create key' }).waitFor();
    const signedInMs = Date.now() - reloadStarted;
    await context.close();

    process.stdout.write(
      `      first load: ${(cold.gzipBytes / 1024).toFixed(1)} KiB gzipped JS in ${cold.files} file(s); sign-in page usable in ` +
        `${times.join(' / ')} ms (fresh contexts; the browser's very first page: ${cold.ms} ms); API keys page, signed in, ` +
        `on reload: ${signedInMs} ms\n`,
    );
    expect(cold.files).to.be.greaterThan(0);
    expect(cold.gzipBytes).to.be.at.most(BUDGET_GZIP_BYTES);
    expect(times[0]).to.be.below(BUDGET_MS);
  });
});
