// Extraction quality: `npx tsx bench/answer-quality/extraction.ts [--verbose]`.
// Starts the service on an in-memory PGlite (workers in process), defines the extractions of
// the labelled set below, runs each on its corpus file through POST /api/v1/extractions/run/file,
// waits for the task, reads the result and scores it against the labels: field accuracy for
// one-record documents, record recall and cell accuracy for tables (multiple). Offline, and
// with the language model when OPENAI_API_KEY or OPENAI_BASE_URL, and FOLIO_LLM_MODEL, are set.
// See README.md ("Extraction").
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../src/config.js';
import { startRuntime } from '../../src/runtime.js';
import { migrateToLatest, openStore } from '../../src/store/engine.js';

const DOCS = fileURLToPath(new URL('../../test/fixtures/corpus/docs/', import.meta.url));
const KEY = 'bench-extraction-key';

type Value = string | number | boolean | string[];

interface Case {
  file: string;
  /** Where the labels come from. */
  source: string;
  schema: Record<string, unknown>;
  multiple?: false;
  expected: Record<string, Value>;
}

interface TableCase {
  file: string;
  source: string;
  schema: Record<string, unknown>;
  multiple: true;
  /** The records in order; the first property identifies a record. */
  expected: Record<string, Value>[];
}

const str = (description?: string) => ({ type: 'string', ...(description ? { description } : {}) });
const date = (description?: string) => ({ type: 'string', format: 'date', ...(description ? { description } : {}) });
const obj = (properties: Record<string, unknown>, required?: string[]) => ({ type: 'object', properties, ...(required ? { required } : {}) });

/**
 * The labelled set. Values are read off the documents (their title pages, headers, bylines,
 * infoboxes and tables); the EU table is in ground_truth/pdf/multicolumn.tex, the HTML titles
 * and bylines in ground_truth/html/*.expected-metadata.json, the full-table rows in
 * ground_truth/pdf/pdf-parse-expected.json. crazyones, lwn-1, nytimes-1, bbc-1 and full-table
 * were not looked at while the extractor was written.
 */
const CASES: (Case | TableCase)[] = [
  {
    file: 'pdf/text/bitcoin.pdf',
    source: 'title page',
    schema: obj({ title: str('Title of the paper'), author: str('Name of the author'), email: { type: 'string', format: 'email', description: "The author's e-mail address" }, website: { type: 'string', format: 'uri' } }),
    expected: { title: 'Bitcoin: A Peer-to-Peer Electronic Cash System', author: 'Satoshi Nakamoto', email: 'satoshin@gmx.com', website: 'https://www.bitcoin.org/' },
  },
  {
    file: 'pdf/text/label-test.pdf',
    source: 'article header (Turk J Med Sci 2009; 39(3): 361-365)',
    schema: obj({
      title: str('Title of the article'),
      author: str('Name of the corresponding author'),
      email: { type: 'string', format: 'email', description: 'E-mail address of the corresponding author' },
      journal: str('Name of the journal'),
      doi: str(),
      year: { type: 'integer' },
      volume: { type: 'integer' },
      issue: { type: 'integer' },
      pages: str('Page range'),
      received_date: date('Date the manuscript was received'),
      accepted_date: date('Date the manuscript was accepted'),
      keywords: { type: 'array', items: { type: 'string' } },
    }),
    expected: {
      title: 'Acute effect of speed exercise on nitric oxide (NO) level of footballers',
      author: 'Özcan SAYGIN',
      email: 'osaygin@mu.edu.tr',
      journal: 'Turk J Med Sci',
      doi: '10.3906/sag-0902-21',
      year: 2009,
      volume: 39,
      issue: 3,
      pages: '361-365',
      received_date: '2009-02-25',
      accepted_date: '2009-04-30',
      keywords: ['Nitric oxide', 'speed exercise', 'footballer'],
    },
  },
  {
    file: 'pdf/text/tracemonkey.pdf',
    source: 'title page',
    schema: obj({ title: str(), authors: { type: 'array', items: { type: 'string' }, description: 'Author names' }, affiliation: str('Organisation of the first author') }),
    expected: {
      title: 'Trace-based Just-in-Time Type Specialization for Dynamic Languages',
      authors: ['Andreas Gal', 'Brendan Eich', 'Mike Shaver', 'David Anderson', 'David Mandelin', 'Mohammad R. Haghighat', 'Blake Kaplan', 'Graydon Hoare', 'Boris Zbarsky', 'Jason Orendorff', 'Jesse Ruderman', 'Edwin Smith', 'Rick Reitmaier', 'Michael Bebenita', 'Mason Chang', 'Michael Franz'],
      affiliation: 'Mozilla Corporation',
    },
  },
  {
    file: 'pdf/text/multicolumn.pdf',
    source: 'multicolumn.tex (\\title, \\author, \\date)',
    schema: obj({ title: str(), author: str(), date: date() }),
    expected: { title: 'Two-Column Document with Lorem Ipsum', author: 'Your Name', date: '2024-01-03' },
  },
  {
    file: 'pdf/text/crazyones-pdfa.pdf',
    source: 'the page',
    schema: obj({ title: str(), date: date() }),
    expected: { title: 'The Crazy Ones', date: '1998-10-14' },
  },
  {
    file: 'html/ietf-1.html',
    source: 'draft header; expected-metadata.json (title, byline)',
    schema: obj({ title: str(), document: str('Name of the draft'), intended_status: str(), expires: date('Expiry date'), author: str() }),
    expected: { title: 'remoteStorage', document: 'draft-dejong-remotestorage-04', intended_status: 'Proposed Standard', expires: '2015-06-18', author: 'Michiel B. de Jong' },
  },
  {
    file: 'html/wikipedia.html',
    source: 'infobox',
    schema: obj({ name: str('Name of the organisation'), founded: date('Date founded'), founder: str(), industry: str(), website: { type: 'string', format: 'uri' } }),
    expected: { name: 'Mozilla', founded: '1998-02-28', founder: 'Netscape Communications Corporation', industry: 'Open-source software', website: 'https://www.mozilla.org/tr/' },
  },
  {
    file: 'html/keep-tabular-data.html',
    source: 'byline; expected-metadata.json (title)',
    schema: obj({ title: str(), published: date('Date the post was published'), authors: { type: 'array', items: { type: 'string' }, description: 'Who posted it' } }),
    expected: { title: 'Friday Facts #282 - 0.17 in sight | Factorio', published: '2019-02-15', authors: ['kovarex', 'TOGos', 'Ernestas', 'Albert'] },
  },
  {
    file: 'html/lwn-1.html',
    source: 'expected-metadata.json (title, byline)',
    schema: obj({ title: str(), author: str(), published_date: date('Publication date') }),
    expected: { title: 'LWN.net Weekly Edition for March 26, 2015 [LWN.net]', author: 'Nathan Willis', published_date: '2015-03-25' },
  },
  {
    file: 'html/nytimes-1.html',
    source: 'expected-metadata.json (title)',
    schema: obj({ headline: str(), dateline: str('City the story was filed from') }),
    expected: { headline: 'United States to Lift Sudan Sanctions', dateline: 'LONDON' },
  },
  {
    file: 'html/bbc-1.html',
    source: 'expected-metadata.json (title)',
    schema: obj({ title: str() }),
    expected: { title: "Obama admits US gun laws are his 'biggest frustration'" },
  },
  {
    file: 'docx/pandoc-tables.docx',
    source: 'the first table',
    schema: obj({ name: str('Player name'), game: str('Sport played'), fame: str(), blame: str() }, ['name']),
    multiple: true,
    expected: [
      { name: 'Lebron James', game: 'Basketball', fame: 'Very High', blame: 'Leaving Cleveland' },
      { name: 'Ryan Braun', game: 'Baseball', fame: 'Moderate', blame: 'Steroids' },
      { name: 'Russell Wilson', game: 'Football', fame: 'High', blame: 'Tacky uniform' },
    ],
  },
  {
    file: 'pdf/text/multicolumn.pdf',
    source: 'multicolumn.tex (Table 1)',
    schema: obj({ country: str(), population: { type: 'number', description: 'Population in millions' }, area: { type: 'integer', description: 'Area in km2' }, capital: str(), official_language: str() }, ['country']),
    multiple: true,
    expected: [
      { country: 'Austria', population: 8.9, area: 83879, capital: 'Vienna', official_language: 'German' },
      { country: 'Belgium', population: 11.5, area: 30689, capital: 'Brussels', official_language: 'Dutch, French, German' },
      { country: 'Czech Republic', population: 10.7, area: 78866, capital: 'Prague', official_language: 'Czech' },
      { country: 'Denmark', population: 5.8, area: 42951, capital: 'Copenhagen', official_language: 'Danish' },
      { country: 'Finland', population: 5.5, area: 338424, capital: 'Helsinki', official_language: 'Finnish, Swedish' },
    ],
  },
  {
    file: 'pdf/text/simple-table.pdf',
    source: 'pdf-parse-expected.json',
    schema: obj({ a: { type: 'integer' }, b: { type: 'integer' }, c: { type: 'integer' }, d: { type: 'integer' } }),
    multiple: true,
    expected: [1, 10, 100, 1000].map((n) => ({ a: n, b: 2 * n, c: 3 * n, d: 4 * n })),
  },
  {
    file: 'html/keep-tabular-data.html',
    source: 'the GUI progress table (first column)',
    schema: obj({ screen: str('Name of the GUI screen') }, ['screen']),
    multiple: true,
    expected: [
      'Load map', 'Save map', 'Graphics settings', 'Control settings', 'Sound settings', 'Interface settings', 'Other settings', 'Map generator',
      'Quick bar Twinsen', 'Train GUI kovarex', 'Technology GUI Oxyd', 'Technology tooltip Oxyd', 'Blueprint library kovarex', 'Shortcut bar Oxyd',
      'Character screen Dominik', 'Help overlay kovarex', 'Manage/Install mods Rseding', 'Recipe/item/Entity tooltip Twinsen', 'Chat icon selector ?',
      'New game ?', 'Menu structure ?', 'Main screen chat ?', 'Recipe explorer ?',
    ].map((screen) => ({ screen })),
  },
  {
    file: 'pdf/text/full-table.pdf',
    source: 'pdf-parse-expected.json (numeric rows)',
    schema: obj({ first: { type: 'integer' }, second: { type: 'integer' }, third: { type: 'integer' }, fourth: { type: 'integer' } }, ['first']),
    multiple: true,
    expected: [
      ...Array.from({ length: 4 }, () => [1, 10, 100, 1000].map((n) => ({ first: n, second: 2 * n, third: 3 * n, fourth: 4 * n }))).flat(),
      { first: 11, second: 22, third: 33, fourth: 44 },
    ],
  },
];

// ---------------------------------------------------------------------------------------------
// Scoring

function normalise(value: unknown): string {
  if (typeof value === 'number') return String(Math.round(value * 1e6) / 1e6);
  if (typeof value === 'string') return value.normalize('NFC').replace(/\s+/g, ' ').trim().replace(/[.,;:]+$/, '').toLowerCase();
  return JSON.stringify(value);
}

function same(expected: Value, actual: unknown): boolean {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return false;
    const a = new Set(actual.map(normalise));
    return expected.length === a.size && expected.every((e) => a.has(normalise(e)));
  }
  return actual !== undefined && normalise(expected) === normalise(actual);
}

interface Score {
  fields: number;
  found: number;
  correct: number;
  records: number;
  recordsFound: number;
  extraRecords: number;
  cells: number;
  cellsCorrect: number;
  ms: number;
  misses: string[];
}

function emptyScore(): Score {
  return { fields: 0, found: 0, correct: 0, records: 0, recordsFound: 0, extraRecords: 0, cells: 0, cellsCorrect: 0, ms: 0, misses: [] };
}

function scoreSingle(c: Case, results: Record<string, unknown>[], score: Score): void {
  const record = results[0] ?? {};
  for (const [key, expected] of Object.entries(c.expected)) {
    score.fields++;
    if (record[key] !== undefined) score.found++;
    if (same(expected, record[key])) score.correct++;
    else score.misses.push(`${path.basename(c.file)} ${key}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(record[key])}`);
  }
}

function scoreTable(c: TableCase, results: Record<string, unknown>[], score: Score): void {
  const keyField = Object.keys(c.expected[0])[0];
  const used = new Set<number>();
  let cursor = 0;
  for (const gold of c.expected) {
    score.records++;
    // The next unused record with the same key, in order (tables repeat keys).
    let match = -1;
    for (let i = cursor; i < results.length; i++) {
      if (!used.has(i) && same(gold[keyField], results[i][keyField])) {
        match = i;
        break;
      }
    }
    const fields = Object.entries(gold);
    score.cells += fields.length;
    if (match < 0) {
      score.misses.push(`${path.basename(c.file)} record ${JSON.stringify(gold)} not found`);
      continue;
    }
    used.add(match);
    cursor = match + 1;
    score.recordsFound++;
    for (const [key, expected] of fields) {
      if (same(expected, results[match][key])) score.cellsCorrect++;
      else score.misses.push(`${path.basename(c.file)} ${String(gold[keyField])}.${key}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(results[match][key])}`);
    }
  }
  score.extraRecords += results.length - used.size;
}

// ---------------------------------------------------------------------------------------------
// Running

function multipart(fields: Record<string, string>, filename: string, data: Buffer): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----bench${randomBytes(8).toString('hex')}`;
  const parts: Buffer[] = Object.entries(fields).map(([name, value]) => Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  parts.push(
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

async function runEngine(env: NodeJS.ProcessEnv, verbose: boolean): Promise<{ single: Score; tables: Score; engine: string }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'folio-bench-extraction-'));
  const config = loadConfig({ ...env, FOLIO_API_KEYS: `${KEY}:bench:write`, FOLIO_RATE_LIMIT: '0', FOLIO_DATA_DIR: dataDir });
  const store = await openStore({ databaseUrl: null, dataDir: null });
  await migrateToLatest(store.db);
  const runtime = await startRuntime(config, store, { role: 'all', logger: false, worker: { pollMs: 50 } });
  const app = runtime.app!;
  const headers = { 'x-api-key': KEY };
  const single = emptyScore();
  const tables = emptyScore();
  try {
    for (const c of CASES) {
      const defined = await app.inject({ method: 'POST', url: '/api/v1/extractions', headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify({ name: path.basename(c.file), schema: c.schema, multiple: c.multiple ?? false }) });
      if (defined.statusCode !== 201) throw new Error(`define ${c.file}: ${defined.statusCode} ${defined.body}`);
      const started = performance.now();
      const body = multipart({ extraction_id: String(defined.json().data.id) }, path.basename(c.file), readFileSync(path.join(DOCS, c.file)));
      const run = await app.inject({ method: 'POST', url: '/api/v1/extractions/run/file', headers: { ...headers, ...body.headers }, payload: body.payload });
      if (run.statusCode !== 201) throw new Error(`run ${c.file}: ${run.statusCode} ${run.body}`);
      const task = run.json().data.task_identifier as string;
      let status: { status: string; message: string };
      for (;;) {
        status = (await app.inject({ method: 'GET', url: `/api/v1/tasks/status/${task}`, headers })).json().data;
        if (status.status === 'COMPLETED' || status.status === 'FAILED') break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const results: Record<string, unknown>[] = status.status === 'COMPLETED' ? (await app.inject({ method: 'GET', url: `/api/v1/extractions/results/task/${task}`, headers })).json().data.results : [];
      const score = c.multiple ? tables : single;
      score.ms += performance.now() - started;
      const before = score.misses.length;
      if (c.multiple) scoreTable(c, results, score);
      else scoreSingle(c, results, score);
      if (verbose) {
        console.log(`${status.status === 'COMPLETED' ? '' : `FAILED (${status.message}) `}${c.file}${c.multiple ? ' [multiple]' : ''}: ${results.length} record(s)`);
        for (const miss of score.misses.slice(before)) console.log(`  miss  ${miss}`);
      }
    }
  } finally {
    await runtime.close();
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return { single, tables, engine: runtime.llm ? `llm ${runtime.llm.model}` : 'offline' };
}

function pct(n: number, d: number): string {
  return d === 0 ? '-' : `${Math.round((100 * n) / d)}%`;
}

function report(label: string, { single, tables }: { single: Score; tables: Score }): void {
  const singleCases = CASES.filter((c) => !c.multiple).length;
  const tableCases = CASES.length - singleCases;
  console.log(
    `${label.padEnd(9)} fields  accuracy ${single.correct}/${single.fields} (${pct(single.correct, single.fields)})  found ${single.found}/${single.fields}  precision ${pct(single.correct, single.found)}  ${(single.ms / singleCases).toFixed(0)} ms/document`,
  );
  console.log(
    `${''.padEnd(9)} tables  records ${tables.recordsFound}/${tables.records} (${pct(tables.recordsFound, tables.records)})  extra ${tables.extraRecords}  cell accuracy ${tables.cellsCorrect}/${tables.cells} (${pct(tables.cellsCorrect, tables.cells)})  ${(tables.ms / tableCases).toFixed(0)} ms/document`,
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { verbose: { type: 'boolean', default: false } } });
  const singleCases = CASES.filter((c) => !c.multiple);
  console.log(
    `labelled set: ${singleCases.length} documents with ${singleCases.reduce((n, c) => n + Object.keys(c.expected).length, 0)} fields, ${CASES.length - singleCases.length} tables with ${CASES.filter((c): c is TableCase => c.multiple === true).reduce((n, c) => n + c.expected.length, 0)} records`,
  );
  const offlineEnv = { ...process.env, OPENAI_API_KEY: '', OPENAI_BASE_URL: '', FOLIO_LLM_MODEL: '' };
  report('offline', await runEngine(offlineEnv, values.verbose!));
  const llmConfigured = (process.env.OPENAI_API_KEY || process.env.OPENAI_BASE_URL) && process.env.FOLIO_LLM_MODEL;
  if (llmConfigured) {
    const figures = await runEngine(process.env, values.verbose!);
    report(figures.engine === 'offline' ? 'llm?' : 'llm', figures);
  } else {
    console.log('llm       skipped: set OPENAI_API_KEY or OPENAI_BASE_URL, and FOLIO_LLM_MODEL');
  }
}

await main();
