// The console end to end in Chromium, against a real folio: paste a key, upload a PDF and a
// DOCX, watch both tasks complete, search, open the page, ask and follow a source, run an
// extraction and download its CSV, revoke the key in use and see the 401 state; then the
// narrow layout and the keyboard. Each step leaves a screenshot in test-results/console/.
import fs from 'node:fs';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { CHROMIUM } from '../playwright.config.js';
import { BOOTSTRAP_KEY } from './global-setup.js';

test.skip(!fs.existsSync(CHROMIUM), `${CHROMIUM} is missing`);
test.describe.configure({ mode: 'serial' });

const CORPUS = 'test/fixtures/corpus/docs';
const PDF = path.join(CORPUS, 'pdf/text/bitcoin.pdf');
const DOCX = path.join(CORPUS, 'docx/terrier-document.docx');
const SHOTS = 'test-results/console';

const base = () => process.env.FOLIO_E2E_URL!;

async function shot(page: Page, name: string, fullPage = true) {
  await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage });
}

/** Console errors and uncaught exceptions on the page; `allowed` matches expected ones. */
function watchErrors(page: Page): { errors: string[] } {
  const seen = { errors: [] as string[] };
  page.on('console', (m) => m.type() === 'error' && seen.errors.push(m.text()));
  page.on('pageerror', (e) => seen.errors.push(String(e)));
  return seen;
}

async function newAdminKey(label: string): Promise<{ key: string; prefix: string }> {
  const res = await fetch(`${base()}/api/v1/keys`, {
    method: 'POST',
    headers: { 'x-api-key': BOOTSTRAP_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ scope: 'admin', label }),
  });
  expect(res.status).toBe(201);
  const { data } = (await res.json()) as { data: { key: string; prefix: string } };
  return data;
}

async function pasteKey(page: Page, key: string) {
  await page.goto(`${base()}/`);
  await expect(page).toHaveURL(/\/console\/$/);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Use this key' }).click();
  await expect(page.getByRole('heading', { name: 'Documents' })).toBeVisible();
}

test('the whole flow, from pasting a key to revoking it', async ({ page }) => {
  const watch = watchErrors(page);
  const { key, prefix } = await newAdminKey('e2e flow');

  await test.step('paste the key', async () => {
    await pasteKey(page, key);
    expect(await page.evaluate(() => sessionStorage.getItem('folio.apiKey'))).toBe(key);
    expect(page.url()).not.toContain(key);
    await shot(page, '01-key-pasted');
  });

  await test.step('upload a PDF and a DOCX and watch both tasks complete', async () => {
    await page.getByRole('link', { name: 'Upload' }).click();
    await page.getByLabel('Files to upload').setInputFiles([PDF, DOCX]);
    const rows = page.getByTestId('task-row');
    await expect(rows).toHaveCount(2);
    for (const name of ['bitcoin.pdf', 'terrier-document.docx']) {
      const row = page.locator(`[data-testid="task-row"][data-name="${name}"]`);
      await expect(row.locator('[data-status]')).toHaveAttribute('data-status', 'COMPLETED', { timeout: 120_000 });
      await expect(row.getByRole('link', { name: /^document \d+$/ })).toBeVisible();
    }
    await shot(page, '02-uploads-completed');
  });

  await test.step('search a phrase from the PDF and see the score parts', async () => {
    await page.getByRole('link', { name: 'Search' }).click();
    await page.getByLabel('Query', { exact: true }).fill('purely peer-to-peer version of electronic cash');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const first = page.getByTestId('search-result').first();
    await expect(first).toBeVisible();
    await expect(first).toContainText(/relevance\s*\d\.\d{3}/);
    await expect(first).toContainText(/semantic\s*\d\.\d{3}/);
    await expect(first).toContainText(/keyword\s*\d\.\d{3}/);
    await expect(first.locator('mark').first()).toBeVisible();
    await expect(first.locator('.snippet')).toContainText(/electronic cash/i);
    await shot(page, '03-search');
    // The date filters: an invalid one disables the search, one that excludes every document empties it.
    const updated = page.getByLabel('Updated-at filter');
    await updated.fill('{"$lt": ');
    await expect(page.getByRole('button', { name: 'Search', exact: true })).toBeDisabled();
    await updated.fill('{"$lt": "2000-01-01T00:00:00Z"}');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect(page.getByText('0 results')).toBeVisible();
    await updated.fill('');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect(page.getByTestId('search-result').first()).toBeVisible();
  });

  await test.step('open the page of the first result', async () => {
    await page.getByTestId('search-result').first().getByRole('link', { name: /^Document \d+, page \d+$/ }).click();
    await expect(page.getByRole('heading', { name: /^Page \d+ of document \d+$/ })).toBeVisible();
    await expect(page.locator('[data-sentence-id]').first()).toBeVisible();
    await shot(page, '04-page');
  });

  await test.step('ask a question and follow a source', async () => {
    await page.getByRole('link', { name: 'Answers' }).click();
    await page.getByLabel('Question', { exact: true }).fill('What would a purely peer-to-peer version of electronic cash allow?');
    await page.getByRole('button', { name: 'Ask' }).click();
    await expect(page.getByTestId('answer')).not.toBeEmpty();
    await shot(page, '05-answer');
    const source = page.getByTestId('answer-source').first();
    const [, page_number] = (await source.textContent())!.match(/page (\d+)/)!;
    await source.click();
    await expect(page.locator(`#page-${page_number}.current`)).toBeVisible();
    await shot(page, '06-source');
  });

  await test.step('the optimise flags show the optimised question and filter', async () => {
    await page.getByRole('link', { name: 'Answers' }).click();
    await page.getByLabel('Question', { exact: true }).fill('How does Bitcoin prevent double-spending?');
    await page.getByLabel('optimise question').check();
    await page.getByLabel('optimise metadata').check();
    await page.getByRole('button', { name: 'Ask' }).click();
    await expect(page.getByText(/Optimised question: .+, metadata: \{.*\}/)).toBeVisible();
    await shot(page, '06-answer-optimised');
  });

  await test.step('create an extraction, run it on the PDF and download the CSV', async () => {
    await page.getByRole('link', { name: 'Extractions' }).click();
    await page.getByLabel('Name', { exact: true }).fill('paper title');
    await page.getByRole('button', { name: 'Create' }).click();
    await expect(page.getByRole('heading', { name: 'Run “paper title”' })).toBeVisible();
    await page.getByLabel('On a file').setInputFiles(PDF);
    const run = page.getByTestId('extraction-run').first();
    await expect(run.locator('[data-status]')).toHaveAttribute('data-status', 'COMPLETED', { timeout: 120_000 });
    await expect(run.getByTestId('extraction-results')).toBeVisible();
    const [download] = await Promise.all([page.waitForEvent('download'), run.getByRole('button', { name: 'Download CSV' }).click()]);
    const csv = fs.readFileSync((await download.path())!, 'utf8');
    expect(csv.split('\r\n')[0]).toBe('title');
    expect(csv.split('\r\n').length).toBeGreaterThan(2);
    await shot(page, '07-extraction');
  });

  expect(watch.errors).toEqual([]);

  await test.step('create a key: its secret is shown once', async () => {
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByLabel('Scope').selectOption('read');
    await page.getByLabel('Label').fill('made in the console');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByTestId('new-key').textContent())!;
    await expect(page.locator(`[data-testid="key-row"][data-prefix="${secret.slice(0, 12)}"]`)).toContainText('made in the console');
    await shot(page, '08-key-created');
    await page.getByRole('link', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'Keys' }).click();
    await expect(page.getByTestId('key-row').first()).toBeVisible();
    await expect(page.getByTestId('new-key')).toHaveCount(0);
  });

  await test.step('revoke the key in use and see the 401 state', async () => {
    await page.locator(`[data-testid="key-row"][data-prefix="${prefix}"]`).getByRole('button', { name: 'Revoke' }).click();
    await expect(page.getByRole('alert')).toContainText('Unauthorized (401)');
    await expect(page.getByLabel('API key')).toBeVisible();
    expect(await page.evaluate(() => sessionStorage.getItem('folio.apiKey'))).toBeNull();
    await shot(page, '09-revoked-401');
  });
  // The browser itself logs the refused request; nothing else may appear.
  expect(watch.errors.filter((e) => !/status of 401/.test(e))).toEqual([]);
});

test('the documents list pages and shows filter errors inline, every view fits 390 px, the keyboard reaches every section', async ({ page }) => {
  const watch = watchErrors(page);
  const { key } = await newAdminKey('e2e layout');
  await page.setViewportSize({ width: 390, height: 844 });
  await pasteKey(page, key);

  await page.getByLabel('Metadata filter').fill('{"kind": {"$nope": 1}}');
  await page.getByRole('button', { name: 'Apply filter' }).click();
  await expect(page.getByRole('alert')).toContainText(/\(4\d\d\)/);
  await page.getByLabel('Metadata filter').fill('{not json');
  await expect(page.getByText('Invalid JSON')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Apply filter' })).toBeDisabled();
  await shot(page, '10-narrow-filter-error');

  // Paging: 21 documents under one filter are two pages of 20.
  await Promise.all(
    Array.from({ length: 21 }, (_, i) =>
      fetch(`${base()}/api/v1/documents/ingest/embedding`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ content: `Paging note ${i}.`, embedding: Array.from({ length: 1536 }, (_, j) => (j === i ? 1 : 0.01)), metadata: { kind: 'e2e-paging' } }),
      }).then((r) => expect(r.status).toBe(201)),
    ),
  );
  await page.getByLabel('Metadata filter').fill('{"kind": "e2e-paging"}');
  await page.getByRole('button', { name: 'Apply filter' }).click();
  // The listing is read by cursor: its total is known once its end is reached.
  await expect(page.getByText('1–20 shown, more follow')).toBeVisible();
  await expect(page.getByRole('row')).toHaveCount(21);
  await page.getByRole('button', { name: 'Next' }).click();
  await expect(page.getByText('21 documents, 21–21 shown')).toBeVisible();
  await expect(page.getByRole('row')).toHaveCount(2);
  await expect(page.getByRole('button', { name: 'Next' })).toBeDisabled();

  const fits = async (what: string) => {
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, `${what} overflows 390 px`).toBeLessThanOrEqual(0);
  };
  await fits('the documents list');
  for (const section of ['Documents', 'Upload', 'Tasks', 'Search', 'Answers', 'Extractions', 'Keys']) {
    await page.getByRole('link', { name: section, exact: true }).click();
    await expect(page.getByRole('heading', { level: 1, name: section })).toBeVisible();
    await fits(section);
  }
  await page.getByRole('link', { name: 'Search', exact: true }).click();
  await page.getByLabel('Query', { exact: true }).fill('peer-to-peer electronic cash');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await expect(page.getByTestId('search-result').first()).toBeVisible();
  await fits('search results');
  await page.getByTestId('search-result').first().getByRole('link', { name: 'in its document' }).click();
  await expect(page.locator('.page.current')).toBeVisible();
  await fits('a document');
  // What the reader sees: the page scrolled to (the whole document is thousands of pixels tall).
  await shot(page, '11-narrow-document', false);

  // Keyboard only: Tab from the top of the page reaches the Search link, Enter opens it.
  await page.goto(`${base()}/console/#/documents`);
  // The view moves focus into its own content: start from the first link of the page's top.
  await page.getByRole('link', { name: 'Folio' }).focus();
  let reached = false;
  for (let i = 0; i < 10 && !reached; i++) {
    await page.keyboard.press('Tab');
    reached = (await page.evaluate(() => document.activeElement?.textContent)) === 'Search';
  }
  expect(reached).toBe(true);
  await page.keyboard.press('Enter');
  await expect(page.getByRole('heading', { level: 1, name: 'Search' })).toBeVisible();
  await page.keyboard.press('Tab');
  expect(watch.errors.filter((e) => !/status of 4\d\d/.test(e))).toEqual([]);
});

test('403, 429 and a network failure each have a clear state', async ({ page }) => {
  const watch = watchErrors(page);
  const res = await fetch(`${base()}/api/v1/keys`, {
    method: 'POST',
    headers: { 'x-api-key': BOOTSTRAP_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ scope: 'read', label: 'e2e read' }),
  });
  const { data } = (await res.json()) as { data: { key: string } };
  await pasteKey(page, data.key);

  // A read key on the admin view: the server's real 403.
  await page.getByRole('link', { name: 'Keys' }).click();
  await expect(page.getByRole('alert')).toContainText('Forbidden (403)');
  await shot(page, '12-forbidden');

  // 429 is answered for the search only (a real limit would also stop the other tests).
  await page.route('**/api/v1/documents/search/pages', (route) =>
    route.fulfill({
      status: 429,
      headers: { 'retry-after': '17', 'content-type': 'application/json' },
      body: JSON.stringify({ data: null, success: false, error: { error_code: 'RATE_LIMIT_EXCEEDED', message: 'Too many requests' }, meta: {} }),
    }),
  );
  await page.getByRole('link', { name: 'Search' }).click();
  await page.getByLabel('Query', { exact: true }).fill('cash');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await expect(page.getByRole('alert')).toContainText('Rate limited (429): retry in 17 s');
  await shot(page, '13-rate-limited');

  await page.route('**/api/v1/**', (route) => route.abort('connectionrefused'));
  await page.getByRole('link', { name: 'Documents' }).click();
  await expect(page.getByRole('alert')).toHaveText(/Folio cannot be reached/);
  await shot(page, '14-network-down');
  await page.unroute('**/api/v1/**');
  await page.getByRole('link', { name: 'Keys' }).click();
  await expect(page.getByRole('alert')).toContainText('Forbidden (403)');
  await expect(page.getByText('Folio cannot be reached')).toHaveCount(0);
  expect(watch.errors.filter((e) => !/status of (403|429)|ERR_CONNECTION_REFUSED/.test(e))).toEqual([]);
});

test('a document: filter the list, open it, patch its metadata, download it, see its versions, delete them after the preview', async ({ page }) => {
  const watch = watchErrors(page);
  const { key } = await newAdminKey('e2e document');
  const file = path.join(CORPUS, 'docx/mammoth-simple-list.docx');
  // Two versions of one external id; the second is the latest.
  for (const kind of ['e2e-docx-old', 'e2e-docx']) {
    const form = new FormData();
    form.set('external_id', 'e2e-doc');
    form.set('metadata', JSON.stringify({ kind }));
    form.set('file', new Blob([fs.readFileSync(file)]), 'mammoth-simple-list.docx');
    const res = await fetch(`${base()}/api/v1/documents/ingest`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
    expect(res.status).toBe(201);
    const task = ((await res.json()) as { data: { task_identifier: string } }).data.task_identifier;
    await expect
      .poll(async () => {
        const status = await fetch(`${base()}/api/v1/tasks/status/${task}`, { headers: { 'x-api-key': key } });
        return ((await status.json()) as { data: { status: string } }).data.status;
      })
      .toBe('COMPLETED');
  }

  await pasteKey(page, key);
  await page.getByLabel('Metadata filter').fill('{"kind": "e2e-docx"}');
  await page.getByRole('button', { name: 'Apply filter' }).click();
  await expect(page.getByText('1 document, 1–1 shown')).toBeVisible();
  const row = page.getByRole('row').filter({ hasText: 'e2e-doc' });
  await row.getByRole('link').click();
  await expect(page.getByTestId('metadata')).toHaveText('{"kind":"e2e-docx"}');

  await page.getByText('Edit metadata').click();
  const patch = page.getByLabel(/Metadata patch/);
  await patch.fill('{"reviewed": tru');
  await expect(page.getByText('Invalid JSON')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Apply patch' })).toBeDisabled();
  await patch.fill('{"reviewed": true}');
  await page.getByRole('button', { name: 'Apply patch' }).click();
  await expect(page.getByRole('status')).toHaveText('Saved.');
  await expect(page.getByTestId('metadata')).toHaveText('{"kind":"e2e-docx","reviewed":true}');

  // A page of the document opens on its paragraphs and sentences, and leads back.
  await page.getByRole('link', { name: 'paragraphs and sentences' }).first().click();
  await expect(page.getByRole('heading', { name: /^Page 1 of document \d+$/ })).toBeVisible();
  await expect(page.locator('[data-sentence-id]').first()).toBeVisible();
  await shot(page, '15-document-page');
  await page.getByRole('link', { name: /^document \d+$/ }).click();
  await expect(page.getByTestId('metadata')).toHaveText('{"kind":"e2e-docx","reviewed":true}');

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download original' }).click()]);
  expect(download.suggestedFilename()).toBe('mammoth-simple-list.docx');
  expect(fs.readFileSync((await download.path())!).equals(fs.readFileSync(file))).toBe(true);
  await shot(page, '15-document');

  await page.getByText('2 versions').click();
  await expect(page.getByRole('listitem').filter({ has: page.getByRole('link') })).toHaveCount(2);

  await page.getByRole('button', { name: 'Delete…' }).click();
  await expect(page.getByRole('alert')).toContainText('This deletes 1 document: this version');
  await page.getByRole('button', { name: 'Cancel' }).click();
  await page.getByRole('button', { name: 'Delete every version…' }).click();
  await expect(page.getByRole('alert')).toContainText('This deletes 2 documents: every version of “e2e-doc”');
  await shot(page, '16-delete-preview');
  await page.getByRole('button', { name: 'Delete', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Documents' })).toBeVisible();
  await page.getByLabel('External id').fill('e2e-doc');
  await page.getByRole('button', { name: 'Open latest version' }).click();
  await expect(page.getByRole('alert')).toContainText('(404)');
  expect(watch.errors.filter((e) => !/status of 404/.test(e))).toEqual([]);
});

test('the tasks view: failed tasks first with their reasons, and a failed upload retried from its kept file', async ({ page }) => {
  const watch = watchErrors(page);
  const { key } = await newAdminKey('e2e tasks');
  const upload = async (name: string, text: string) => {
    const form = new FormData();
    form.set('file', new Blob([text], { type: 'text/plain' }), name);
    const res = await fetch(`${base()}/api/v1/documents/ingest`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
    expect(res.status).toBe(201);
    return ((await res.json()) as { data: { task_identifier: string } }).data.task_identifier;
  };
  const blank = await upload('e2e-blank.txt', '   \n\n   ');
  const good = await upload('e2e-good.txt', 'A note that ingests.');
  await pasteKey(page, key);
  await page.getByRole('link', { name: 'Tasks' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Tasks' })).toBeVisible();
  const failed = page.getByRole('table', { name: 'Failed tasks' });
  const recent = page.getByRole('table', { name: 'Recent tasks' });
  await expect(async () => {
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect(failed.locator(`[data-id="${blank}"]`)).toBeVisible({ timeout: 1000 });
    await expect(recent.locator(`[data-id="${good}"] [data-status]`)).toHaveAttribute('data-status', 'COMPLETED', { timeout: 1000 });
  }).toPass({ timeout: 60_000 });
  await expect(failed.locator(`[data-id="${blank}"]`)).toContainText('No text could be extracted');
  await expect(failed.locator(`[data-id="${blank}"]`)).toContainText('e2e-blank.txt');
  await shot(page, '19-tasks');

  await failed.locator(`[data-id="${blank}"]`).getByRole('button', { name: 'Retry' }).click();
  await expect(page.getByRole('status')).toContainText('e2e-blank.txt: queued again as IngestFile:');
  const again = (await page.getByRole('status').textContent())!.match(/IngestFile:[0-9a-f-]+/)![0];
  // The same kept file fails the same way: the retry is the newest failed task.
  await expect(async () => {
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect(failed.getByTestId('listed-task').first()).toHaveAttribute('data-id', again, { timeout: 1000 });
  }).toPass({ timeout: 60_000 });
  await expect(failed.getByTestId('listed-task')).toHaveCount(2);
  await shot(page, '20-tasks-retried');
  expect(watch.errors).toEqual([]);
});

test('URLs and dropped files: ingested as tasks that end in a document or the reason they failed; an extraction runs on a URL and on a document', async ({ page }) => {
  const watch = watchErrors(page);
  const { key } = await newAdminKey('e2e urls');
  const corpus = process.env.FOLIO_E2E_CORPUS_URL!;
  await pasteKey(page, key);
  await page.getByRole('link', { name: 'Upload' }).click();
  await page.getByLabel('URLs, one per line').fill(`${corpus}/html/ietf-1.html\n${corpus}/html/missing.html`);
  await page.getByRole('button', { name: 'Ingest URLs' }).click();
  const good = page.locator(`[data-testid="task-row"][data-name="${corpus}/html/ietf-1.html"]`);
  const bad = page.locator(`[data-testid="task-row"][data-name="${corpus}/html/missing.html"]`);
  await expect(good.locator('[data-status]')).toHaveAttribute('data-status', 'COMPLETED', { timeout: 60_000 });
  await expect(bad.locator('[data-status]')).toHaveAttribute('data-status', 'FAILED', { timeout: 60_000 });
  await expect(bad.locator('.error-text')).toContainText('404');
  // A file dropped on the drop zone is uploaded like a chosen one.
  const dropped = await page.evaluateHandle(() => {
    const transfer = new DataTransfer();
    transfer.items.add(new File(['A note dropped on the console.'], 'dropped.txt', { type: 'text/plain' }));
    return transfer;
  });
  await page.getByText('Drop files here or choose them').dispatchEvent('drop', { dataTransfer: dropped });
  await expect(page.locator('[data-testid="task-row"][data-name="dropped.txt"] [data-status]')).toHaveAttribute('data-status', 'COMPLETED');
  await shot(page, '17-urls');
  const documentId = (await good.getByRole('link').textContent())!.replace('document ', '');

  await page.getByRole('link', { name: 'Extractions' }).click();
  await page.getByLabel('Name', { exact: true }).fill('page title');
  await page.getByRole('button', { name: 'Create' }).click();
  await page.getByLabel('On a URL').fill(`${corpus}/html/ietf-1.html`);
  await page.getByRole('button', { name: 'Run' }).first().click();
  await page.getByLabel('On document id').fill(documentId);
  await page.getByRole('button', { name: 'Run' }).last().click();
  const runs = page.getByTestId('extraction-run');
  await expect(runs).toHaveCount(2);
  for (const run of await runs.all()) {
    await expect(run.locator('[data-status]')).toHaveAttribute('data-status', 'COMPLETED', { timeout: 60_000 });
    await expect(run.getByTestId('extraction-results').locator('tbody tr')).not.toHaveCount(0);
  }
  await shot(page, '18-extraction-runs');
  expect(watch.errors).toEqual([]);
});
