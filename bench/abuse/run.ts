// Abuse benchmark: a `folio serve` process on each engine takes the fuzz test's malformed
// requests and a set of heavy ones over real HTTP while /health is probed; prints the
// server's peak resident memory and /health latency beside the same figures at rest.
// `npx tsx bench/abuse/run.ts [--engine pglite|postgres|both] [--requests N] [--concurrency N]`.
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { KEYS, vector } from '../../test/helpers/app.js';
import { malformedRequests, routesOf, type MalformedRequest } from '../../test/helpers/malformed.js';
import { closeConnections, percentile, probeHealth, residentMb, send, startServer } from '../lib/serve.js';

const AIM_RSS_MB = 1024;
const AIM_HEALTH_MS = 100;

const { values: args } = parseArgs({
  options: {
    engine: { type: 'string', default: 'both' },
    requests: { type: 'string', default: '4000' },
    concurrency: { type: 'string', default: '4' },
  },
});
const engines = args.engine === 'both' ? ['pglite', 'postgres'] : [args.engine!];
const total = Number(args.requests);
const concurrency = Number(args.concurrency);
if (!engines.every((e) => e === 'pglite' || e === 'postgres') || !(total > 0) || !(concurrency > 0)) {
  console.error('usage: run.ts [--engine pglite|postgres|both] [--requests N] [--concurrency N]');
  process.exit(2);
}

/** Requests meant to make the server allocate or compute as much as one request may. */
function heavyRequests(): { method: string; url: string; body: string | Buffer; key: string }[] {
  const json = (body: unknown) => JSON.stringify(body);
  const wide = { $or: Array.from({ length: 999 }, (_, i) => ({ [`f${i}`]: { $regex: `^x{1,9}${i}` } })) };
  const list: { method: string; url: string; body: string | Buffer; key: string }[] = [
    { method: 'POST', url: '/api/v1/documents/search/pages', body: json({ query: 'the of and a to in', alpha: 0.5, top_k: 1000 }), key: KEYS.write },
    { method: 'POST', url: '/api/v1/documents/search/pages', body: json({ query: 'x', alpha: 0, top_k: 1000, metadata_filter: wide }), key: KEYS.write },
    { method: 'POST', url: '/api/v1/documents/search/pages', body: json({ query: 'x', metadata_filter: { k: { $regex: 'a{1,199}a{1,199}a{1,199}a{1,199}a{1,199}c' } } }), key: KEYS.write },
    { method: 'POST', url: '/api/v1/documents/search/pages', body: json({ query: 'x', metadata_filter: { k: { $in: Array.from({ length: 60_000 }, (_, i) => `v${i}`) } } }), key: KEYS.write },
    { method: 'POST', url: '/api/v1/documents/answer', body: json({ question: 'what does the text say about the of and', top_k: 50 }), key: KEYS.write },
    { method: 'POST', url: '/api/v1/documents/delete/preview', body: json({ metadata_filter: { n: { $gte: 0 } } }), key: KEYS.write },
    { method: 'POST', url: '/api/v1/documents/search/pages', body: Buffer.alloc(8 * 1024 * 1024, 'a'), key: KEYS.write },
    { method: 'POST', url: '/api/v1/documents/search/pages', body: '['.repeat(1_000_000), key: KEYS.write },
    { method: 'POST', url: '/api/v1/documents/ingest/embedding', body: json({ embedding: vector(3), content: 'y'.repeat(3000), metadata: { big: 'z'.repeat(1_000_000) } }), key: KEYS.write },
    { method: 'POST', url: '/api/v1/documents/ingest/embedding', body: `[${'1,'.repeat(500_000)}1]`, key: KEYS.write },
  ];
  return list;
}

async function run(engine: string): Promise<void> {
  const server = await startServer(engine);
  const { port, child } = server;
  const pid = child.pid!;
  try {
    const routes = routesOf(await (await fetch(`http://127.0.0.1:${port}/openapi.json`)).json());
    // A corpus to search: 300 pages of 3,000 characters, every tenth with a 30,000-character value.
    for (let i = 0; i < 300; i++) {
      const metadata = { n: i, k: i % 10 === 0 ? 'a'.repeat(30_000) : `v${i}` };
      const content = `page ${i} ` + 'the of and a to in text about documents '.repeat(70);
      await send(port, 'POST', '/api/v1/documents/ingest/embedding', { 'x-api-key': KEYS.write, 'content-type': 'application/json' }, JSON.stringify({ embedding: vector(i + 10), content, metadata }));
    }
    const restRss = residentMb(pid, 'VmRSS');
    const restHealth = await probeHealth(port, () => new Promise((r) => setTimeout(r, 2000)));

    const requests = fc.sample(malformedRequests(routes), { seed: 20261124, numRuns: total });
    const heavy = heavyRequests();
    const statuses = new Map<number, number>();
    let peakRss = restRss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, residentMb(pid, 'VmRSS'))), 50);
    let next = 0;
    const started = performance.now();
    const abuseHealth = await probeHealth(port, async () => {
      const worker = async () => {
        while (next < requests.length) {
          const i = next++;
          const request: MalformedRequest = requests[i];
          const headers: Record<string, string> = { ...request.headers };
          if (request.key !== null) headers['x-api-key'] = request.key;
          const answer = await send(port, request.method, request.url, headers, request.payload);
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          // One heavy request after every 40 malformed ones.
          if (i % 40 === 0) {
            const h = heavy[(i / 40) % heavy.length];
            const heavyAnswer = await send(port, h.method, h.url, { 'x-api-key': h.key, 'content-type': 'application/json' }, h.body);
            statuses.set(heavyAnswer.status, (statuses.get(heavyAnswer.status) ?? 0) + 1);
          }
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
    });
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const hwm = residentMb(pid, 'VmHWM');
    const after = await send(port, 'POST', '/api/v1/documents/search/pages', { 'x-api-key': KEYS.write, 'content-type': 'application/json' }, JSON.stringify({ query: 'documents', alpha: 0.5 }));

    const fivexx = [...statuses].filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0);
    const sent = [...statuses.values()].reduce((a, b) => a + b, 0);
    console.log(`\n${engine}: ${sent} requests in ${seconds.toFixed(1)} s (${concurrency} clients), 5xx: ${fivexx}, statuses: ${[...statuses].sort((a, b) => a[0] - b[0]).map(([s, c]) => `${s}x${c}`).join(' ')}`);
    console.log(`  search after the abuse: ${after.status}`);
    console.log('  figure                      at rest    under abuse   aim');
    console.log(`  resident memory (MB)        ${restRss.toFixed(0).padStart(7)}    ${peakRss.toFixed(0).padStart(7)} (high-water ${hwm.toFixed(0)})   <= ${AIM_RSS_MB}`);
    for (const p of [50, 99]) {
      console.log(`  /health p${p} (ms)             ${percentile(restHealth, p).toFixed(1).padStart(7)}    ${percentile(abuseHealth, p).toFixed(1).padStart(7)}        ${p === 99 ? `<= ${AIM_HEALTH_MS}` : ''}`);
    }
    console.log(`  /health max (ms)            ${Math.max(...restHealth).toFixed(1).padStart(7)}    ${Math.max(...abuseHealth).toFixed(1).padStart(7)}`);
  } finally {
    await server.cleanup();
  }
}

for (const engine of engines) await run(engine);
closeConnections();
