// Assembles a running Folio from configuration and an open store: the HTTP API, the task
// workers with the webhook delivery loop, or both, with the shared parts (keys, rate limiter,
// vector index, embedder, blob store, parsers). main.ts, tests and benchmarks start the service
// through here.
import path from 'node:path';
import pino, { type Logger } from 'pino';
import type { Config } from './config.js';
import { buildApp, type App } from './http/app.js';
import { createMemoryRateLimiter, createRedisRateLimiter, type RateLimiter } from './http/rate-limit.js';
import { ParserPool } from './sources/parsers/index.js';
import { extractionTasks } from './extraction/run.js';
import { ingestTasks } from './ingest/pipeline.js';
import { reembedTasks, scheduleReembedding } from './ingest/reembedding.js';
import { createCachedEmbedder, createEmbeddingProvider, type CachedEmbedder } from './providers/embeddings/index.js';
import { createLlmProvider, type LlmProvider } from './providers/llm/index.js';
import { IndexSnapshots } from './search/index-snapshot.js';
import { ScanPool } from './search/kernel/index.js';
import { PageIndex } from './search/page-index.js';
import { BlobStore } from './store/blobs.js';
import type { Store } from './store/engine.js';
import { workspacesWithPages } from './store/pages.js';
import { countTasksByKindAndStatus, oldestRunnableTaskAge } from './store/task-stats.js';
import { createServices } from './services.js';
import { TaskRegistry } from './tasks/registry.js';
import { TaskWorker, type WorkerOptions } from './tasks/worker.js';
import { WebhookDeliverer, type DeliveryOptions } from './webhooks/delivery.js';
import { KeyResolver } from './workspaces/keys.js';

export type Role = 'all' | 'api' | 'worker';

export interface RuntimeOptions {
  role: Role;
  /** false silences logs (tests). */
  logger?: boolean;
  /** Replaces the limiter the configuration implies (tests share one between replicas). */
  rateLimiter?: RateLimiter | null;
  worker?: Partial<WorkerOptions>;
  /** Over the configuration's delivery settings (tests shorten them; metrics attach onAttempt). */
  webhooks?: Partial<DeliveryOptions>;
  scanThreads?: number;
}

export interface Runtime {
  app: App | null;
  worker: TaskWorker | null;
  /** The webhook delivery loop, which runs beside the task workers. */
  deliverer: WebhookDeliverer | null;
  index: PageIndex | null;
  embedder: CachedEmbedder;
  /** The language model when configured (OPENAI_API_KEY or OPENAI_BASE_URL, and FOLIO_LLM_MODEL), else null. */
  llm: LlmProvider | null;
  blobs: BlobStore;
  close(): Promise<void>;
}

function rateLimiterFor(config: Config, onError: (err: unknown) => void): RateLimiter | null {
  if (config.rateLimit === 0) return null;
  return config.redisUrl
    ? createRedisRateLimiter(config.redisUrl, config.rateLimit, { onError })
    : createMemoryRateLimiter(config.rateLimit);
}

/**
 * Loads the page index of every workspace with pages, in the background, so that no search
 * after a restart waits for its workspace to load (seconds at 50k pages). Never rejects: a
 * workspace whose load failed loads at its first search.
 */
async function preloadIndex(store: Store, index: PageIndex, log: Logger): Promise<void> {
  try {
    const started = performance.now();
    const workspaces = await workspacesWithPages(store.db);
    if (workspaces.length === 0) return;
    await index.preload(workspaces);
    const { workspaces: loaded, pages } = index.memory();
    log.info({ workspaces: loaded, pages, ms: Math.round(performance.now() - started) }, 'page index preloaded');
  } catch (err) {
    log.warn({ err }, 'page index preload failed; workspaces load at their first search');
  }
}

export async function startRuntime(config: Config, store: Store, options: RuntimeOptions): Promise<Runtime> {
  const log = pino({ level: options.logger === false ? 'silent' : config.logLevel });
  const embedder = createCachedEmbedder(createEmbeddingProvider(config), { maxEntries: 1000 });
  const llm = createLlmProvider(config);
  const blobs = new BlobStore(path.join(config.dataDir, 'blobs'));
  const closers: (() => Promise<void>)[] = [];
  let index: PageIndex | null = null;
  // prom-client is loaded only where metrics are served.
  const metrics = config.metricsToken
    ? new (await import('./http/metrics.js')).Metrics({
        taskCounts: () => countTasksByKindAndStatus(store.db),
        oldestRunnableTaskAge: () => oldestRunnableTaskAge(store.db),
        connections: () => store.connections(),
        vectorIndex: () => index?.memory() ?? null,
      })
    : null;
  // The page index of this process (an API's) follows the workspaces its ingests write to, unless
  // workspaces are left to load at their first search.
  const onPagesIngested = (workspaceId: number, pages: number) => {
    metrics?.countPagesIngested(pages);
    if (config.indexPreload) index?.follow(workspaceId);
  };

  let worker: TaskWorker | null = null;
  let deliverer: WebhookDeliverer | null = null;
  const notifyDeliverer = () => deliverer?.notify();
  if (options.role !== 'api') {
    deliverer = new WebhookDeliverer(store.db, log.child({ component: 'webhooks' }), {
      allowlist: config.urlAllowlist,
      retryBaseMs: config.webhookRetryBaseMs,
      timeoutMs: config.webhookTimeoutMs,
      disableAfterMs: config.webhookDisableAfterMs,
      ...options.webhooks,
      onAttempt: (report) => {
        metrics?.countDelivery(report.outcome);
        options.webhooks?.onAttempt?.(report);
      },
    });
    const delivering = deliverer;
    closers.unshift(() => delivering.stop());
    const parsers = new ParserPool({
      threads: config.parserThreads,
      maxMemoryMb: config.parserMemoryMb,
      ocr: config.ocr ? { threads: config.ocrThreads, languages: config.ocrLangs } : null,
    });
    closers.push(() => parsers.close());
    // Fails at boot when a task kind has no handler.
    const registry = new TaskRegistry([
      ...ingestTasks({
        db: store.db,
        blobs,
        parsers,
        embedder,
        maxFileBytes: config.maxFileBytes,
        urlAllowlist: config.urlAllowlist,
        urlTimeoutMs: config.urlTimeoutMs,
        onPagesIngested,
      }),
      ...reembedTasks({ db: store.db, embedder }),
      ...extractionTasks({
        db: store.db,
        blobs,
        parsers,
        llm,
        maxFileBytes: config.maxFileBytes,
        urlAllowlist: config.urlAllowlist,
        urlTimeoutMs: config.urlTimeoutMs,
      }),
    ]);
    worker = new TaskWorker(
      store.db,
      registry,
      log.child({ component: 'worker' }),
      {
        concurrency: config.workerConcurrency,
        leaseMs: config.taskLeaseMs,
        shutdownGraceMs: config.shutdownGraceMs,
        ...options.worker,
      },
      notifyDeliverer,
    );
    const running = worker;
    closers.unshift(() => running.stop());
    // After an upgrade of the offline embedder, pages of its former model are embedded again.
    const queued = await scheduleReembedding(store.db, embedder);
    if (queued.length > 0) log.info({ tasks: queued }, 'pages of the former offline embedding model queued to be embedded again');
  }

  let app: App | null = null;
  if (options.role !== 'worker') {
    const keys = new KeyResolver(store.db);
    await keys.loadBootstrapKeys(config.apiKeys);
    const rateLimiter =
      options.rateLimiter !== undefined
        ? options.rateLimiter
        : rateLimiterFor(config, (err) => log.warn({ err }, 'rate limit store unavailable; request allowed'));
    const pool = new ScanPool({ threads: options.scanThreads });
    const indexDir = path.join(config.dataDir, 'index');
    const snapshots = new IndexSnapshots(path.join(indexDir, 'snapshots'), log.child({ component: 'page-index' }));
    const pageIndex = new PageIndex(store, pool, indexDir, snapshots);
    index = pageIndex;
    const inProcessWorker = worker;
    const services = createServices({
      store,
      index: pageIndex,
      embedder,
      llm,
      blobs,
      keys,
      maxFileBytes: config.maxFileBytes,
      urlAllowlist: config.urlAllowlist,
      webhookResolveTimeoutMs: config.webhookTimeoutMs,
      onEnqueue: () => inProcessWorker?.notify(),
      onWebhookEvents: notifyDeliverer,
      onOptimizerLlmError: (err) => log.warn({ err }, 'language model failed during query optimisation; offline matcher used'),
      onSearch: metrics ? (alpha, seconds) => metrics.observeSearch(alpha, seconds) : undefined,
      onPagesIngested,
    });
    app = await buildApp({ config, services, keys, rateLimiter, metrics, logger: options.logger });
    const started = app;
    const preloading = config.indexPreload ? preloadIndex(store, pageIndex, log) : Promise.resolve();
    closers.unshift(async () => {
      await started.close();
      await pageIndex.close();
      await preloading;
      await pool.close();
      await rateLimiter?.close();
    });
  }

  worker?.start();
  deliverer?.start();
  return {
    app,
    worker,
    deliverer,
    index,
    embedder,
    llm,
    blobs,
    close: async () => {
      for (const close of closers) await close();
    },
  };
}
