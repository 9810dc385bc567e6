// Starts `folio serve` (from source, with the console built into dist/console) on a free
// port, embedded engine in a temp dir, with one bootstrap admin key, and a local web server
// of the test corpus for URL ingestion (allowlisted past the private-address guard). Their
// URLs reach the tests through the environment. A missing Chromium fails under CI=true,
// else the tests are skipped.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startServer } from '../test/helpers/process.js';
import { CHROMIUM } from '../playwright.config.js';

export const BOOTSTRAP_KEY = 'e2e-bootstrap-admin-key';
const CORPUS_DIR = path.resolve('test/fixtures/corpus/docs');

export default async function globalSetup(): Promise<(() => Promise<void>) | void> {
  if (!fs.existsSync(CHROMIUM)) {
    if (process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (.ci/run does)`);
    console.error(`${CHROMIUM} is missing: the console's browser tests are skipped`);
    return;
  }
  if (!fs.existsSync('dist/console/index.html')) throw new Error('dist/console is missing: run `npm run build` first');
  const corpus = http.createServer((req, res) => {
    const file = path.join(CORPUS_DIR, decodeURIComponent(new URL(req.url ?? '/', 'http://corpus').pathname));
    if (!file.startsWith(`${CORPUS_DIR}/`) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': file.endsWith('.html') ? 'text/html; charset=utf-8' : 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => corpus.listen(0, '127.0.0.1', resolve));
  process.env.FOLIO_E2E_CORPUS_URL = `http://127.0.0.1:${(corpus.address() as AddressInfo).port}`;

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-e2e-'));
  const server = await startServer({
    FOLIO_DATA_DIR: dataDir,
    FOLIO_API_KEYS: `${BOOTSTRAP_KEY}:default:admin`,
    FOLIO_URL_ALLOWLIST: '127.0.0.1',
  });
  process.env.FOLIO_E2E_URL = server.url;
  return async () => {
    await server.stop();
    await new Promise((resolve) => corpus.close(resolve));
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
}
