// One version: src/version.ts (meta.version, the OpenAPI info.version, `folio --version`)
// agrees with package.json, the client's package.json and with the latest release in CHANGELOG.md.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { VERSION } from '../../src/version.js';
import { runFolio } from '../helpers/process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('version', () => {
  it('is the one in package.json and in the TypeScript client\'s', () => {
    for (const file of ['package.json', 'clients/typescript/package.json']) {
      const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8')) as { version: string };
      expect(pkg.version, `${file} and src/version.ts disagree`).toBe(VERSION);
    }
  });

  it('is the latest release in CHANGELOG.md', () => {
    const changelog = fs.readFileSync(path.join(ROOT, 'CHANGELOG.md'), 'utf8');
    const released = changelog.match(/^## \[(\d+\.\d+\.\d+)\]/m);
    expect(released?.[1], 'the first released heading of CHANGELOG.md').toBe(VERSION);
  });

  it('is what folio --version prints', async () => {
    const run = await runFolio(['--version'], {});
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(`${VERSION}\n`);
  }, 60_000); // tsx compiles the whole CLI first: seconds, more on a busy machine
});
