// Starts `folio serve` (from source, with the console built into dist/console) on a free
// port, embedded engine in a temp dir, with one bootstrap admin key. The URL and key reach
// the tests through the environment. A missing Chromium fails under CI=true, else skips.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer } from '../test/helpers/process.js';
import { CHROMIUM } from '../playwright.config.js';

export const BOOTSTRAP_KEY = 'e2e-bootstrap-admin-key';

export default async function globalSetup(): Promise<(() => Promise<void>) | void> {
  if (!fs.existsSync(CHROMIUM)) {
    if (process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (.ci/run does)`);
    console.error(`${CHROMIUM} is missing: the console's browser tests are skipped`);
    return;
  }
  if (!fs.existsSync('dist/console/index.html')) throw new Error('dist/console is missing: run `npm run build` first');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-e2e-'));
  const server = await startServer({
    FOLIO_DATA_DIR: dataDir,
    FOLIO_API_KEYS: `${BOOTSTRAP_KEY}:default:admin`,
  });
  process.env.FOLIO_E2E_URL = server.url;
  return async () => {
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
}
