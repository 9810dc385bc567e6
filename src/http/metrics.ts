// Prometheus metrics at GET /metrics, served only when FOLIO_METRICS_TOKEN is set (a scrape
// must then bring it as a bearer token). Each process keeps its own registry: counters and
// histograms count what this process did; gauges read the shared state (tasks, pool, index)
// when scraped.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { errors } from '../errors.js';
import { errorBody } from './envelope.js';

export type SearchMode = 'semantic' | 'keyword' | 'hybrid';
export type DeliveryOutcome = 'succeeded' | 'retrying' | 'failed';

/** What the gauges read at each scrape. */
export interface MetricSources {
  taskCounts(): Promise<{ kind: string; status: string; count: number }[]>;
  oldestRunnableTaskAge(): Promise<number>;
  connections(): { max: number; open: number; idle: number; waiting: number };
  /** Null in a process without the page index (a worker). */
  vectorIndex(): { pages: number; vectorBytes: number; reservedBytes: number } | null;
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class Metrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'folio_http_requests_total',
    help: 'HTTP requests answered, by route template, method and status code',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  private readonly requestDuration = new Histogram({
    name: 'folio_http_request_duration_seconds',
    help: 'Time from request to response, by route template and method',
    labelNames: ['route', 'method'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly searchDuration = new Histogram({
    name: 'folio_search_duration_seconds',
    help: 'Time of a completed search, by mode (semantic: alpha 1, keyword: alpha 0, hybrid: between)',
    labelNames: ['mode'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly pagesIngested = new Counter({
    name: 'folio_pages_ingested_total',
    help: 'Pages stored by ingestion in this process (files, URLs and embeddings)',
    registers: [this.registry],
  });
  private readonly deliveries = new Counter({
    name: 'folio_webhook_deliveries_total',
    help: 'Webhook delivery attempts made by this process, by outcome',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  constructor(sources: MetricSources) {
    collectDefaultMetrics({ register: this.registry });
    // Read before the gauges below query the database, so a scrape does not count its own statements.
    new Gauge({
      name: 'folio_db_pool_connections',
      help: 'Database connections by state (max: the pool size; the embedded engine is a pool of one)',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const use = sources.connections();
        this.set({ state: 'max' }, use.max);
        this.set({ state: 'open' }, use.open);
        this.set({ state: 'idle' }, use.idle);
        this.set({ state: 'in_use' }, use.open - use.idle);
        this.set({ state: 'waiting' }, use.waiting);
      },
    });
    new Gauge({
      name: 'folio_tasks',
      help: 'Tasks in the queue table, by kind and status (all workspaces)',
      labelNames: ['kind', 'status'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const row of await sources.taskCounts()) this.set({ kind: row.kind, status: row.status }, row.count);
      },
    });
    new Gauge({
      name: 'folio_task_queue_oldest_age_seconds',
      help: 'How long the longest-waiting runnable task (pending or due for a retry) has waited',
      registers: [this.registry],
      async collect() {
        this.set(await sources.oldestRunnableTaskAge());
      },
    });
    new Gauge({
      name: 'folio_vector_index_pages',
      help: 'Pages held in this process\'s in-memory page index',
      registers: [this.registry],
      collect() {
        this.set(sources.vectorIndex()?.pages ?? 0);
      },
    });
    new Gauge({
      name: 'folio_vector_index_bytes',
      help: 'Bytes of vectors in the page index (kind=used) and of the memory reserved for them (kind=reserved)',
      labelNames: ['kind'] as const,
      registers: [this.registry],
      collect() {
        const index = sources.vectorIndex();
        this.set({ kind: 'used' }, index?.vectorBytes ?? 0);
        this.set({ kind: 'reserved' }, index?.reservedBytes ?? 0);
      },
    });
  }

  /** Times a search under its mode, from its alpha. */
  observeSearch(alpha: number, seconds: number): void {
    this.searchDuration.observe({ mode: searchMode(alpha) }, seconds);
  }

  countPagesIngested(pages: number): void {
    this.pagesIngested.inc(pages);
  }

  countDelivery(outcome: DeliveryOutcome): void {
    this.deliveries.inc({ outcome });
  }

  /** Counts every response and serves GET /metrics behind the token. */
  register(app: FastifyInstance, token: string): void {
    app.addHook('onResponse', async (request, reply) => {
      // The route template keeps the label set small; unmatched paths share one label.
      const route = request.routeOptions.url ?? 'unmatched';
      this.requests.inc({ route, method: request.method, status: String(reply.statusCode) });
      this.requestDuration.observe({ route, method: request.method }, reply.elapsedTime / 1000);
    });
    const expected = Buffer.from(`Bearer ${token}`);
    app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
      const given = Buffer.from(request.headers.authorization ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        return reply.status(401).header('www-authenticate', 'Bearer').send(errorBody('envelope', errors.unauthorized('A valid metrics token is required')));
      }
      return reply.type(this.registry.contentType).send(await this.registry.metrics());
    });
  }
}

function searchMode(alpha: number): SearchMode {
  return alpha >= 1 ? 'semantic' : alpha <= 0 ? 'keyword' : 'hybrid';
}
