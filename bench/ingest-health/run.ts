// Ingestion, the event loop and memory: a `folio serve` process on each engine ingests a
// generated PDF of many pages, a DOCX bomb and a DOCX heavy enough to exhaust the parser
// thread's heap, one after the other, while /health is probed every 20 ms; prints /health
// latency beside the same figures at rest, each outcome and ingest time, and the server's
// peak resident memory.
// `npx tsx bench/ingest-health/run.ts [--engine pglite|postgres|both] [--pages N]`.
import { parseArgs } from 'node:util';
import { KEYS } from '../../test/helpers/app.js';
import { W, docx, pagesPdf, para } from '../../test/helpers/documents.js';
import { multipartBody } from '../../test/helpers/multipart.js';
import { closeConnections, percentile, probeHealth, residentMb, send, startServer } from '../lib/serve.js';

const AIM_HEALTH_P99_MS = 100;
const AIM_RSS_MB = 2048;
const MIB = 1024 * 1024;

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
  const part = Buffer.alloc(480 * MIB, ' ');
  Buffer.from(`<?xml version="1.0"?><w:document ${W}><w:body>`).copy(part);
  return docx('', undefined, { 'word/document.xml': part, 'word/styles.xml': part, 'word/footnotes.xml': part });
}

/** 60 MiB of short paragraphs: within the inflation caps, beyond what the parser's heap holds. */
function heavyDocx(): Uint8Array {
  const paragraph = para('Row of a very long table with some words in it.');
  return docx(paragraph.repeat(Math.floor((60 * MIB) / paragraph.length)));
}

interface Upload {
  payload: Uint8Array<ArrayBuffer>;
  headers: Record<string, string>;
}

/** Built before /health is probed: copying megabytes then would delay the probe, not the server. */
function uploadBody(name: string, data: Uint8Array): Upload {
  const body = multipartBody({}, { filename: name, data: Buffer.from(data) });
  return { payload: new Uint8Array(body.payload), headers: body.headers };
}

async function upload(port: number, body: Upload): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/documents/ingest`, {
    method: 'POST',
    headers: { ...body.headers, 'x-api-key': KEYS.write },
    body: body.payload,
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

function latency(values: number[]): string {
  const max = Math.max(...values);
  return `p50 ${percentile(values, 50).toFixed(1)}, p99 ${percentile(values, 99).toFixed(1)}, max ${max.toFixed(1)} ms`;
}

interface Case {
  label: string;
  name: string;
  data: Uint8Array;
}

/** Uploads one file and waits for its task while probing /health and sampling memory. */
async function ingestWatched(port: number, pid: number, file: Case): Promise<void> {
  const body = uploadBody(file.name, file.data);
  let outcome = { status: '', message: '' };
  let health: number[] = [];
  const started = performance.now();
  const peak = await peakRss(pid, async () => {
    const work = async () => {
      outcome = await finished(port, await upload(port, body));
    };
    health = await probeHealth(port, work, 20);
  });
  const seconds = (performance.now() - started) / 1000;
  console.log(`  ${file.label}, ${(file.data.length / 1e6).toFixed(1)} MB uploaded: ${outcome.status} in ${seconds.toFixed(1)} s: ${outcome.message}`);
  console.log(`    /health during: ${latency(health)} (p99 aim <= ${AIM_HEALTH_P99_MS}); peak resident ${peak.toFixed(0)} MB (aim < ${AIM_RSS_MB})`);
}

async function run(engine: string, cases: Case[]): Promise<void> {
  const server = await startServer(engine);
  const pid = server.child.pid!;
  try {
    const rest = await probeHealth(server.port, () => new Promise((r) => setTimeout(r, 3000)), 20);
    console.log(`\n${engine}: /health at rest: ${latency(rest)}; resident ${residentMb(pid, 'VmRSS').toFixed(0)} MB`);
    for (const file of cases) await ingestWatched(server.port, pid, file);
    const search = await send(server.port, 'POST', '/api/v1/documents/search/pages', { 'x-api-key': KEYS.write, 'content-type': 'application/json' }, JSON.stringify({ query: 'harbour manifest', alpha: 0 }));
    console.log(`  search afterwards: ${search.status} in ${search.ms.toFixed(0)} ms; resident high-water ${residentMb(pid, 'VmHWM').toFixed(0)} MB`);
  } finally {
    await server.cleanup();
  }
}

const cases: Case[] = [
  { label: `${pageCount}-page PDF`, name: 'ledger.pdf', data: pagesPdf(Array.from({ length: pageCount }, (_, i) => pageText(i + 1))) },
  { label: 'DOCX bomb (3 parts of 480 MiB inflated)', name: 'bomb.docx', data: docxBomb() },
  { label: 'heavy DOCX (60 MiB of paragraphs)', name: 'heavy.docx', data: heavyDocx() },
];
for (const engine of engines) await run(engine, cases);
closeConnections();
