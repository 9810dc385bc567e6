// Ingestion and the event loop: a `folio serve` process on each engine ingests a generated
// PDF of many pages while /health is probed every 20 ms, then a DOCX bomb; prints /health
// latency beside the same figures at rest, the ingest time and the server's peak memory.
// `npx tsx bench/ingest-health/run.ts [--engine pglite|postgres|both] [--pages N]`.
import { parseArgs } from 'node:util';
import { KEYS } from '../../test/helpers/app.js';
import { W, docx, pagesPdf } from '../../test/helpers/documents.js';
import { multipartBody } from '../../test/helpers/multipart.js';
import { closeConnections, percentile, probeHealth, residentMb, send, startServer, type Served } from '../lib/serve.js';

const AIM_HEALTH_P99_MS = 100;
const AIM_BOMB_RSS_MB = 2048;

const { values: args } = parseArgs({
  options: {
    engine: { type: 'string', default: 'both' },
    pages: { type: 'string', default: '5000' },
  },
});
const engines = args.engine === 'both' ? ['pglite', 'postgres'] : [args.engine!];
const pageCount = Number(args.pages);
if (!engines.every((e) => e === 'pglite' || e === 'postgres') || !(pageCount > 0)) {
  console.error('usage: run.ts [--engine pglite|postgres|both] [--pages N]');
  process.exit(2);
}

const WORDS = 'harbour ledger tide cargo vessel anchor pilot berth manifest crane dock quay customs freight channel beacon'.split(' ');

/** A page of about 1,500 characters of varied words, as a text PDF line. */
function pageText(n: number): string {
  const words: string[] = [`Page ${n}.`];
  for (let i = 0; words.join(' ').length < 1500; i++) words.push(WORDS[(n * 7 + i * 13 + (i >> 3)) % WORDS.length]);
  return words.join(' ');
}

/** Three parts of 480 MiB each once inflated, about 1.5 MB as uploaded. */
function docxBomb(): Uint8Array {
  const part = Buffer.alloc(480 * 1024 * 1024, ' ');
  Buffer.from(`<?xml version="1.0"?><w:document ${W}><w:body>`).copy(part);
  return docx('', undefined, { 'word/document.xml': part, 'word/styles.xml': part, 'word/footnotes.xml': part });
}

async function upload(port: number, name: string, data: Uint8Array): Promise<string> {
  const body = multipartBody({}, { filename: name, data: Buffer.from(data) });
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/documents/ingest`, {
    method: 'POST',
    headers: { ...body.headers, 'x-api-key': KEYS.write },
    body: new Uint8Array(body.payload),
  });
  if (res.status !== 201) throw new Error(`upload answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { data: { task_identifier: string } }).data.task_identifier;
}

async function finished(port: number, task: string): Promise<{ status: string; message: string }> {
  for (;;) {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/tasks/status/${task}`, { headers: { 'x-api-key': KEYS.write } });
    const status = ((await res.json()) as { data: { status: string; message: string } }).data;
    if (status.status === 'COMPLETED' || status.status === 'FAILED') return status;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Runs `work` while sampling the server's resident memory every 50 ms; the peak in MB. */
async function peakRss(pid: number, work: () => Promise<void>): Promise<number> {
  let peak = residentMb(pid, 'VmRSS');
  const sampler = setInterval(() => (peak = Math.max(peak, residentMb(pid, 'VmRSS'))), 50);
  try {
    await work();
  } finally {
    clearInterval(sampler);
  }
  return peak;
}

function latencyRow(label: string, rest: number[], busy: number[], aim = ''): string {
  return `  ${label.padEnd(22)}${rest.length ? percentileCells(rest) : ''}    ${percentileCells(busy)}   ${aim}`;
}

function percentileCells(values: number[]): string {
  return [50, 99].map((p) => percentile(values, p).toFixed(1).padStart(7)).join(' ') + Math.max(...values).toFixed(1).padStart(8);
}

async function run(engine: string, pdf: Uint8Array, bomb: Uint8Array): Promise<void> {
  const server: Served = await startServer(engine);
  const { port, child } = server;
  const pid = child.pid!;
  try {
    const rest = await probeHealth(port, () => new Promise((r) => setTimeout(r, 3000)), 20);
    const restRss = residentMb(pid, 'VmRSS');
    let outcome = { status: '', message: '' };
    let seconds = 0;
    let during: number[] = [];
    const pdfPeak = await peakRss(pid, async () => {
      const started = performance.now();
      during = await probeHealth(
        port,
        async () => {
          outcome = await finished(port, await upload(port, 'ledger.pdf', pdf));
        },
        20,
      );
      seconds = (performance.now() - started) / 1000;
    });
    let bombOutcome = { status: '', message: '' };
    let bombHealth: number[] = [];
    const bombPeak = await peakRss(pid, async () => {
      bombHealth = await probeHealth(
        port,
        async () => {
          bombOutcome = await finished(port, await upload(port, 'bomb.docx', bomb));
        },
        20,
      );
    });
    const search = await send(port, 'POST', '/api/v1/documents/search/pages', { 'x-api-key': KEYS.write, 'content-type': 'application/json' }, JSON.stringify({ query: 'harbour manifest', alpha: 0 }));

    console.log(`\n${engine}: ${pageCount}-page PDF (${(pdf.length / 1e6).toFixed(1)} MB) ${outcome.status} in ${seconds.toFixed(1)} s: ${outcome.message}`);
    console.log(`  DOCX bomb (${(bomb.length / 1e6).toFixed(1)} MB, 3 x 480 MiB inflated): ${bombOutcome.status}: ${bombOutcome.message}`);
    console.log(`  search afterwards: ${search.status} in ${search.ms.toFixed(0)} ms`);
    console.log('  /health (ms)             at rest p50/p99/max      during ingest p50/p99/max');
    console.log(latencyRow('PDF', rest, during, `p99 aim <= ${AIM_HEALTH_P99_MS}`));
    console.log(latencyRow('DOCX bomb', [], bombHealth).replace(/^(.{24})/, '$1' + ' '.repeat(27)));
    console.log(`  resident memory (MB)     at rest ${restRss.toFixed(0)}, PDF peak ${pdfPeak.toFixed(0)}, bomb peak ${bombPeak.toFixed(0)} (aim <= ${AIM_BOMB_RSS_MB}), high-water ${residentMb(pid, 'VmHWM').toFixed(0)}`);
  } finally {
    await server.cleanup();
  }
}

const pdf = pagesPdf(Array.from({ length: pageCount }, (_, i) => pageText(i + 1)));
const bomb = docxBomb();
for (const engine of engines) await run(engine, pdf, bomb);
closeConnections();
