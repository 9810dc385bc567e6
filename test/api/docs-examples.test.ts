// The examples of README.md and docs/ against a real `folio serve` (embedded engine, fresh data
// directory): every fenced block whose info string holds `runnable` is run in document order, sh
// blocks with bash, ts blocks with node against the client built from its source, and must
// succeed. curl in them must use --fail (or -f), so a non-2xx answer fails its block (a curl that
// expects an error writes %{http_code}, which its block tests), and a client call answered with
// an error throws. A sh, bash or ts block that calls curl or imports @folio/client must be marked
// runnable (or `no-run`, on purpose). The scheme is described in docs/README.md ("Writing the
// docs"). Also: every relative link in README.md and docs/ points to an existing file, and its
// #anchor, if any, to a heading of that page.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type Server } from '../helpers/process.js';
import { migratedDataDir } from '../helpers/stores.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const KEY = 'docs-examples-admin-key';
const METRICS_TOKEN = 'docs-examples-metrics-token';
const CLIENT_SOURCE = path.join(ROOT, 'clients/typescript/src');
const BLOCK_TIMEOUT_MS = 30_000;

interface Block {
  file: string;
  line: number;
  lang: string;
  flags: string[];
  code: string;
}

/** README.md, then every Markdown file under docs/, in path order. */
function markdownFiles(): string[] {
  const walk = (dir: string): string[] =>
    fs
      .readdirSync(dir, { withFileTypes: true })
      .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith('.md') ? [path.join(dir, e.name)] : []))
      .sort();
  return [path.join(ROOT, 'README.md'), ...walk(path.join(ROOT, 'docs'))];
}

/** The fenced code blocks of a Markdown file, with their info strings split into language and flags. */
function fencedBlocks(file: string): Block[] {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const found: Block[] = [];
  let open: { fence: string; line: number; lang: string; flags: string[]; body: string[] } | null = null;
  lines.forEach((text, i) => {
    const fence = /^\s*(`{3,}|~{3,})\s*(.*)$/.exec(text);
    if (open) {
      if (fence && fence[1].startsWith(open.fence) && fence[2].trim() === '') {
        found.push({ file: path.relative(ROOT, file), line: open.line, lang: open.lang, flags: open.flags, code: open.body.join('\n') });
        open = null;
      } else {
        open.body.push(text);
      }
    } else if (fence) {
      const [lang = '', ...flags] = fence[2].trim().split(/\s+/);
      open = { fence: fence[1], line: i + 1, lang, flags, body: [] };
    }
  });
  return found;
}

const FILES = markdownFiles();
const BLOCKS = FILES.flatMap(fencedBlocks);
const RUNNABLE = BLOCKS.filter((b) => b.flags.includes('runnable'));
const where = (b: Block) => `${b.file}:${b.line}`;

interface Outcome {
  code: number | null;
  output: string;
}

function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => {
      output += `\n(killed after ${BLOCK_TIMEOUT_MS} ms)`;
      child.kill('SIGKILL');
    }, BLOCK_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** TypeScript to an ES module, as tsx or esbuild would: types dropped, nothing checked. */
function transpile(code: string, fileName: string): string {
  return ts.transpileModule(code, { fileName, compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
}

/**
 * The client built for the run: clients/typescript/src transpiled into a folder under
 * node_modules/.cache (where its own import, openapi-fetch, resolves). Cheaper than starting tsx
 * for every example: each is then a plain `node example.mjs`.
 */
function buildClient(): string {
  const out = fs.mkdtempSync(path.join(ROOT, 'node_modules/.cache/folio-docs-client-'));
  for (const name of fs.readdirSync(CLIENT_SOURCE).filter((n) => n.endsWith('.ts'))) {
    const file = path.join(CLIENT_SOURCE, name);
    fs.writeFileSync(path.join(out, name.replace(/\.ts$/, '.js')), transpile(fs.readFileSync(file, 'utf8'), file));
  }
  return out;
}

// A sh block runs in bash with `set -euo pipefail`, after the variables the page's earlier
// blocks set (kept in a state file, as a reader's shell keeps them).
function shellScript(block: Block, state: string): string {
  return [
    'set -euo pipefail',
    '__base=$(compgen -v | sort)',
    `if [ -f '${state}' ]; then source '${state}'; fi`,
    block.code,
    `for __v in $(comm -13 <(echo "$__base") <(compgen -v | sort)); do case $__v in __*|BASH*|_) ;; *) declare -p "$__v";; esac; done > '${state}.next'`,
    `mv '${state}.next' '${state}'`,
    '',
  ].join('\n');
}

describe('documentation examples', { timeout: 180_000 }, () => {
  let dataDir: string;
  let work: string;
  let receiver: Receiver;
  let server: Server;
  let env: NodeJS.ProcessEnv;
  let client: string;

  // A busy machine (other test files, benchmarks) can take a minute to start the server.
  beforeAll(async () => {
    fs.mkdirSync(path.join(ROOT, 'node_modules/.cache'), { recursive: true });
    client = buildClient();
    dataDir = await migratedDataDir('folio-docs-');
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-docs-work-'));
    receiver = await startReceiver();
    server = await startServer({
      FOLIO_DATA_DIR: dataDir,
      FOLIO_API_KEYS: `${KEY}:docs:admin`,
      FOLIO_RATE_LIMIT: '0',
      FOLIO_OCR: 'off',
      FOLIO_METRICS_TOKEN: METRICS_TOKEN,
      // The webhook example's endpoint is the local receiver.
      FOLIO_URL_ALLOWLIST: '127.0.0.1',
    });
    env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      FOLIO_URL: server.url,
      FOLIO_API_KEY: KEY,
      FOLIO_METRICS_TOKEN: METRICS_TOKEN,
      WEBHOOK_URL: `${receiver.url}/hooks/folio`,
    };
  }, 150_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
    await receiver?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    if (work) fs.rmSync(work, { recursive: true, force: true });
    if (client) fs.rmSync(client, { recursive: true, force: true });
  });

  it('finds runnable examples, each in a language the test runs, calling curl with --fail', () => {
    expect(RUNNABLE.length).toBeGreaterThan(20);
    for (const block of RUNNABLE) {
      expect(['sh', 'bash', 'ts'], `${where(block)}: runnable blocks are sh, bash or ts`).toContain(block.lang);
      // A curl that expects an error status instead writes %{http_code} for the block to test.
      for (const line of block.code.split('\n').filter((l) => /(^|[\s;|&(])curl\s/.test(l) && !l.includes('%{http_code}'))) {
        expect(line, `${where(block)}: curl without --fail cannot fail on a 4xx or 5xx`).toMatch(/\s(-[a-zA-Z]*f[a-zA-Z]*|--fail|--fail-with-body)(\s|$)/);
      }
    }
  });

  it('marks every curl and client example runnable or no-run', () => {
    const unmarked = BLOCKS.filter(
      (b) =>
        ['sh', 'bash', 'shell', 'ts', 'typescript', 'js', 'javascript'].includes(b.lang) &&
        /(^|[\s;|&(])curl\s|@folio\/client/.test(b.code) &&
        !b.flags.includes('runnable') &&
        !b.flags.includes('no-run'),
    );
    expect(unmarked.map(where)).toEqual([]);
  });

  // One test per page, its blocks in order: a page's sh blocks share their variables.
  const pages = [...new Set(RUNNABLE.map((b) => b.file))];
  it.each(pages)('%s: its runnable examples succeed against a live server', async (page) => {
    const dir = fs.mkdtempSync(path.join(work, 'page-'));
    const state = path.join(dir, '.state.sh');
    for (const block of RUNNABLE.filter((b) => b.file === page)) {
      let outcome: Outcome;
      if (block.lang === 'ts') {
        const file = path.join(dir, `example-${block.line}.mjs`);
        const code = block.code.replaceAll(/(['"])@folio\/client\1/g, `'${pathToFileURL(path.join(client, 'index.js')).href}'`);
        fs.writeFileSync(file, transpile(code, `example-${block.line}.mts`));
        outcome = await run(process.execPath, [file], { cwd: dir, env });
      } else {
        const file = path.join(dir, `example-${block.line}.sh`);
        fs.writeFileSync(file, shellScript(block, state));
        outcome = await run('bash', [file], { cwd: dir, env });
      }
      expect(outcome.code, `${where(block)} failed:\n${block.code}\n--- output ---\n${outcome.output.slice(-4000)}`).toBe(0);
    }
  });

  it('delivers the webhook example its event', async () => {
    // The webhooks guide creates an endpoint for task.completed, then ingests a document.
    if (!RUNNABLE.some((b) => b.code.includes('$WEBHOOK_URL'))) return;
    await receiver.waitFor((r) => r.some((x) => x.path === '/hooks/folio' && x.event.type === 'task.completed'), 20_000);
  });

  it('has relative links that resolve to existing files and headings', () => {
    const withoutCode = (text: string) => text.replace(/^\s*(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\s*\1\s*$/gm, '');
    // GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens.
    const anchors = (file: string) =>
      new Set(
        [...withoutCode(fs.readFileSync(file, 'utf8')).matchAll(/^#{1,6}\s+(.*)$/gm)].map((m) =>
          m[1].trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-'),
        ),
      );
    const broken: string[] = [];
    for (const file of FILES) {
      // Links outside code: drop fenced blocks and inline code first.
      const text = withoutCode(fs.readFileSync(file, 'utf8')).replace(/`[^`\n]*`/g, '');
      for (const match of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = match[1];
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        const [link, anchor] = target.split('#');
        const resolved = link === '' ? file : path.resolve(path.dirname(file), decodeURIComponent(link));
        if (!fs.existsSync(resolved)) broken.push(`${path.relative(ROOT, file)}: ${target}`);
        else if (anchor !== undefined && resolved.endsWith('.md') && !anchors(resolved).has(anchor)) {
          broken.push(`${path.relative(ROOT, file)}: ${target} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
