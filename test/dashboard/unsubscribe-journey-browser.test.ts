import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { createApp } from '../../src/app';
import { caller, silentLogger } from '../support/app';
import { browserSuite, lookAtBothWidths, serveDashboard, signInAt } from '../support/browser';
import { channelSettings } from '../support/channels';
import { buildUser } from '../support/dashboard';
import { testDb } from '../support/db';
import { buildTenant } from '../support/factories';
import { startSmtpServer } from '../support/smtp-server';
import { engineAt } from '../services/engine/support';

// The unsubscribe journey (issue 29, "Quality bar"): a sequence (email, wait, email) triggered
// over REST; the first email received by a real SMTP server; its List-Unsubscribe link POSTed
// with no cookie and the RFC 8058 body, as a mail client does; the engine's clock moved past the
// wait; then, in the dashboard, the second email step "skipped: unsubscribed" in the run's
// timeline and in the sequence's Analytics funnel. Axe, and screenshots at 1280x800 and 390x844.


describe(browserSuite('the unsubscribe journey in the dashboard'), function () {
  this.timeout(120_000);
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let settings: ReturnType<typeof channelSettings>;
  const dashboard = serveDashboard(async () => {
    smtp = await startSmtpServer();
    settings = channelSettings({ smtpUrl: smtp.url, emailFrom: 'Shop <shop@example.com>' });
    return createApp({ db: testDb(), config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000 }, logger: silentLogger, channels: settings });
  });
  after(async () => {
    await smtp?.close();
  });
  let page: Page;
  beforeEach(async () => (page = await dashboard.newPage()));

  it('unsubscribes through the first email\'s link, and shows the second email skipped in the timeline and the funnel', async () => {
    const tenant = await buildTenant();
    const { sequence } = await caller(tenant.key).sequences.create({
      name: 'Nurture',
      status: 'active',
      steps: [
        { id: 'hello', type: 'email', subject: 'Hello {{ contact.firstName }}', html: '<p>Hi</p><p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>' },
        // A minute, not days: the Analytics panel counts by day up to the server's real today, and
        // the engine's clock, moved by the test, dates what it counts.
        { id: 'later', type: 'wait', duration: 'PT1M' },
        { id: 'again', type: 'email', subject: 'Still there, {{ contact.firstName }}?', html: '<p>Again</p>' },
      ],
    });
    const triggered = await fetch(`${dashboard.base}/api/v1/sequences/${sequence.id}/trigger`, {
      method: 'POST',
      headers: { 'x-api-key': tenant.key, 'content-type': 'application/json' },
      body: JSON.stringify({ contact: { email: 'ada@example.com', firstName: 'Ada' } }),
    });
    expect(triggered.status, await triggered.clone().text()).to.equal(202);
    const { runId } = (await triggered.json()) as { runId: string };
    const { engine, advance } = engineAt(Date.now() + 1, { messages: { settings, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')) } });
    try {
      advance(1_000);
      await engine.runUntilIdle();
      expect(smtp.received).to.have.length(1);
      expect(smtp.received[0]!.parsed.subject).to.equal('Hello Ada');
      const headers = smtp.received[0]!.raw.split(/\r?\n\r?\n/)[0]!.replace(/\r?\n(?=[ \t])/g, '');
      const link = /^List-Unsubscribe: <([^>]+)>\r?$/m.exec(headers)?.[1];
      expect(link, 'List-Unsubscribe header').to.be.a('string');

      // As a mail client does it (RFC 8058): a POST with no cookie and the one-click body.
      const unsubscribed = await fetch(`${dashboard.base}${new URL(link!).pathname}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'List-Unsubscribe=One-Click',
      });
      expect(unsubscribed.status).to.equal(200);

      advance(61_000);
      await engine.runUntilIdle();
      expect(smtp.received, 'the second email is not sent').to.have.length(1);
    } finally {
      await engine.stop(50);
    }

    const user = await buildUser(tenant.accountId);
    await signInAt(page, `${dashboard.base}/dashboard/runs/${runId}`, user.email);
    await page.getByRole('heading', { name: /Run Completed/ }).waitFor();
    expect(await page.locator('.event .step-id').allTextContents()).to.deep.equal(['hello', 'later', 'again']);
    const again = page.locator('.event').filter({ has: page.locator('.step-id', { hasText: /^again$/ }) });
    expect(await again.innerText()).to.match(/Skipped/i);
    expect(await again.innerText()).to.match(/unsubscribed/);
    // A skipped message never goes out: the timeline does not say it will.
    expect(await again.innerText()).to.include('Never sent: nothing was rendered.').and.not.include('Not sent yet');
    await lookAtBothWidths(page, 'unsubscribe-journey-timeline');

    await page.goto(`${dashboard.base}/dashboard/sequences/${sequence.id}`);
    const panel = page.getByRole('region', { name: 'Analytics' });
    const funnel = panel.getByRole('list', { name: 'Per step' });
    await funnel.waitFor();
    const items = await funnel.locator('li').evaluateAll((lis) => lis.map((li) => (li as HTMLElement).innerText.replace(/\s*\n\s*/g, ' / ').trim()));
    const step = items.find((item) => item.startsWith('again'));
    expect(step, items.join('\n')).to.match(/1 reached · 0 completed · 1 skipped · 0 failed · 0 waiting \/ Skipped: 1 unsubscribed/);
    await funnel.scrollIntoViewIfNeeded();
    await lookAtBothWidths(page, 'unsubscribe-journey-funnel');
  });
});
