import { expect } from 'chai';
import { browserSuite, lookAtBothWidths, serveTestDashboard } from '../support/browser';
import { atNewSequence } from '../support/builder-page';

// Issue 37, item 6: a new sequence opens on its builder, in a marketer's words. The page began
// with a read-only Steps panel that repeated the builder and told an empty sequence that "the
// runner moves this sequence's runs from outside, through the API", with the builder below
// Analytics; now the builder is the page's first panel, and the empty sequence says what to do.

describe(browserSuite('a new sequence opens on its builder'), function () {
  this.timeout(90_000);
  const dashboard = serveTestDashboard();

  it('puts the builder first on an empty sequence, with no Steps panel and no talk of the API or the runner', async () => {
    const page = await dashboard.newPage();
    const { sequence } = await atNewSequence(dashboard, page, { name: 'Welcome', status: 'draft' });
    await page.getByRole('region', { name: 'Builder' }).waitFor();
    await page.getByRole('region', { name: 'Analytics' }).waitFor();
    const panels = await page.locator('main section.panel > h2').allInnerTexts();
    expect(panels[0], panels.join(', ')).to.equal('Builder');
    expect(panels).to.not.include('Steps');
    const text = await page.locator('main').innerText();
    expect(text).to.not.match(/runner|through the API|from outside/);
    await page.getByRole('region', { name: 'Builder' }).getByText('No steps yet').waitFor();
    await page.getByRole('region', { name: 'Analytics' }).getByText(/No steps yet/).waitFor();
    await lookAtBothWidths(page, 'sequence-builder-first');
  });
});
