// /openapi.json passes Redocly CLI's lint (redocly.yaml: the recommended rules and a
// camelCase operationId on every operation) with no error and no warning, so that client
// generators get a complete document. `npm run lint:openapi` runs this file alone; the
// document it linted stays in test-results/openapi/ for `npx redocly lint` by hand.
// The CLI runs offline: telemetry off, and any socket it opens fails the test.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERSION } from '../../src/version.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { MARKER } from '../helpers/no-network.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');
const NO_NETWORK = pathToFileURL(path.join(ROOT, 'test/helpers/no-network.mjs')).href;
const OUT_DIR = path.join(ROOT, 'test-results/openapi');
// .redocly.lint-ignore.yaml names this path: its accepted problems apply to this file only.
const DOCUMENT = path.join(OUT_DIR, 'openapi.json');

interface Problem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  ignored?: boolean;
  location: { pointer?: string }[];
}

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: Problem[];
}

/** `redocly lint --format=json` of one file with redocly.yaml; exits 1 on errors, so the exit code is not checked. */
function lint(file: string): Promise<{ report: LintReport; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [CLI, 'lint', file, '--config', path.join(ROOT, 'redocly.yaml'), '--format=json'],
      {
        cwd: ROOT,
        maxBuffer: 64 * 1024 * 1024,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          REDOCLY_TELEMETRY: 'off',
          REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
          NODE_OPTIONS: `--import=${NO_NETWORK}`,
        },
      },
      (error, stdout, stderr) => {
        try {
          resolve({ report: JSON.parse(stdout) as LintReport, stderr });
        } catch {
          reject(new Error(`redocly lint gave no report (${error?.message ?? 'exit 0'}):\n${stderr}`));
        }
      },
    );
  });
}

// Redocly CLI takes about 3 s when the machine is idle, many more beside other test files.
const LINT_TIMEOUT_MS = 120_000;

const shown = (problems: Problem[]) =>
  problems.filter((p) => !p.ignored).map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer ?? '?'}: ${p.message}`);

describe('OpenAPI document', () => {
  let t: TestApp;
  let spec: Record<string, unknown>;
  beforeAll(async () => {
    t = await startTestApp('pglite');
    spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    fs.mkdirSync(OUT_DIR, { recursive: true });
    fs.writeFileSync(DOCUMENT, JSON.stringify(spec, null, 2));
  });
  afterAll(async () => t?.close());

  it('passes redocly lint with no error and no warning, offline', async () => {
    const { report, stderr } = await lint(DOCUMENT);
    expect(stderr).not.toContain(MARKER);
    expect(shown(report.problems), 'redocly lint problems (npm run lint:openapi)').toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    // The problems .redocly.lint-ignore.yaml accepts, all still found: an entry that no
    // longer matches (or a new one) changes the count.
    expect(report.totals.ignored).toBe(1);
  }, LINT_TIMEOUT_MS);

  it('has the version that meta.version reports', () => {
    expect((spec.info as { version: string }).version).toBe(VERSION);
  });

  it('fails a document that breaks the rules', async () => {
    const broken = structuredClone(spec) as {
      info: Record<string, unknown>;
      paths: Record<string, Record<string, { operationId?: string; responses: Record<string, unknown> }>>;
    };
    delete broken.info.license;
    delete broken.paths['/health'].get.operationId;
    broken.paths['/ready'].get.operationId = 'get_readiness';
    delete broken.paths['/ready'].get.responses['400'];
    delete broken.paths['/ready'].get.responses['408'];
    delete broken.paths['/ready'].get.responses['431'];
    const file = path.join(OUT_DIR, 'broken.json');
    fs.writeFileSync(file, JSON.stringify(broken, null, 2));

    const { report, stderr } = await lint(file);
    expect(stderr).not.toContain(MARKER);
    // Outside the file .redocly.lint-ignore.yaml names, the accepted problem shows too.
    expect(new Set(report.problems.filter((p) => !p.ignored).map((p) => p.ruleId))).toEqual(
      new Set(['info-license', 'operation-operationId', 'rule/operation-id-camel-case', 'operation-4xx-response', 'no-ambiguous-paths']),
    );
    expect(report.totals.errors).toBeGreaterThan(0);
  }, LINT_TIMEOUT_MS);
});
