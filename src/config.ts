// Environment -> typed configuration with the embedded defaults. Parsed once in main.ts;
// modules receive the result, never read process.env themselves.
import path from 'node:path';

export type Scope = 'read' | 'write' | 'admin';

export interface BootstrapKey {
  key: string;
  workspace: string;
  scope: Scope;
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | null;
  /** The embedded engine's page cache (PostgreSQL shared_buffers) in MiB (FOLIO_EMBEDDED_CACHE_MB). */
  embeddedCacheMb: number;
  /** The embedded engine's write-ahead log between checkpoints (PostgreSQL max_wal_size) in MiB (FOLIO_EMBEDDED_WAL_MB). */
  embeddedWalMb: number;
  redisUrl: string | null;
  apiKeys: BootstrapKey[];
  /** Requests per minute per key; 0 disables the limit. */
  rateLimit: number;
  /** Largest accepted JSON body in bytes. */
  bodyLimit: number;
  /** Deadline for receiving a whole request, body included; a slower one is answered 408 (FOLIO_REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number;
  logLevel: string;
  openaiApiKey: string | null;
  openaiBaseUrl: string | null;
  embeddingModel: string;
  llmModel: string | null;
  /** Per attempt of a chat call (FOLIO_LLM_TIMEOUT_MS). */
  llmTimeoutMs: number;
  /** Attempts per chat call on timeouts, 429 and 5xx (FOLIO_LLM_MAX_ATTEMPTS). */
  llmMaxAttempts: number;
  /** Completion tokens per chat call (FOLIO_LLM_MAX_TOKENS). */
  llmMaxTokens: number;
  /** Estimated prompt tokens per chat call; prompts are packed to fit (FOLIO_LLM_PROMPT_TOKENS). */
  llmPromptTokens: number;
  urlAllowlist: string[];
  /** Largest uploaded or fetched file in bytes (FOLIO_MAX_FILE_MB). */
  maxFileBytes: number;
  /** Tasks a worker process runs at once. */
  workerConcurrency: number;
  /** Threads that parse documents. */
  parserThreads: number;
  /** Heap limit of each parser thread in MiB: a file that needs more fails its task. */
  parserMemoryMb: number;
  /** Load every workspace's page index at start-up rather than at its first search (FOLIO_INDEX_PRELOAD=on|off). */
  indexPreload: boolean;
  /** OCR of scanned PDF pages and images (FOLIO_OCR=on|off). */
  ocr: boolean;
  /** OCR languages, Tesseract codes joined by '+' (FOLIO_OCR_LANGS, e.g. eng+deu). */
  ocrLangs: string;
  /** Tesseract worker threads shared by the parser threads (FOLIO_OCR_THREADS). */
  ocrThreads: number;
  /** How long shutdown lets tasks in hand finish before handing them back to the queue. */
  shutdownGraceMs: number;
  /** Deadline for fetching one URL, body included. */
  urlTimeoutMs: number;
  /** How long a worker's claim on a task lasts without a heartbeat (a dead worker's tasks wait this long). */
  taskLeaseMs: number;
  /** Serves GET /metrics to scrapes bearing this token (FOLIO_METRICS_TOKEN); null leaves it off. */
  metricsToken: string | null;
  /** Wait after a webhook delivery's first failed attempt; later waits grow threefold (FOLIO_WEBHOOK_RETRY_BASE_MS). */
  webhookRetryBaseMs: number;
  /** Deadline of one delivery attempt, DNS to the response's status line (FOLIO_WEBHOOK_TIMEOUT_MS). */
  webhookTimeoutMs: number;
  /** An endpoint whose attempts have all failed for this long is disabled (FOLIO_WEBHOOK_DISABLE_AFTER_HOURS). */
  webhookDisableAfterMs: number;
}

export class ConfigError extends Error {}

/** The embedded engine's page cache: enough for the statements a search runs, small beside the index. */
export const DEFAULT_EMBEDDED_CACHE_MB = 32;

/** PostgreSQL's own default max_wal_size: the disk a large ingestion's log may take, beside the data. */
export const DEFAULT_EMBEDDED_WAL_MB = 1024;

const SCOPES: readonly Scope[] = ['read', 'write', 'admin'];

function parseInteger(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  }
  return value;
}

function parseSwitch(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['on', 'true', '1', 'yes'].includes(raw)) return true;
  if (['off', 'false', '0', 'no'].includes(raw)) return false;
  throw new ConfigError(`${name} must be on or off, got "${env[name]}"`);
}

function parseOcrLangs(raw: string | undefined): string {
  const codes = (raw ?? '').split(/[+,\s]+/).filter((c) => c !== '');
  if (codes.length === 0) return 'eng';
  for (const code of codes) {
    if (!/^[a-z]{3}(?:_[a-z]+)*$/i.test(code)) {
      throw new ConfigError(`FOLIO_OCR_LANGS: "${code}" is not a Tesseract language code (such as eng, deu, chi_sim)`);
    }
  }
  return codes.join('+');
}

function nonEmpty(value: string | undefined): string | null {
  return value !== undefined && value.trim() !== '' ? value.trim() : null;
}

/** Parses `key:workspace:scope,key2:workspace2:read`. */
export function parseApiKeys(raw: string | undefined): BootstrapKey[] {
  if (!raw || raw.trim() === '') return [];
  return raw.split(',').map((entry) => {
    const parts = entry.trim().split(':');
    if (parts.length !== 3 || parts.some((p) => p === '')) {
      throw new ConfigError(`FOLIO_API_KEYS entry "${entry}" must be key:workspace:scope`);
    }
    const [key, workspace, scope] = parts;
    if (!SCOPES.includes(scope as Scope)) {
      throw new ConfigError(`FOLIO_API_KEYS scope "${scope}" must be one of ${SCOPES.join(', ')}`);
    }
    return { key, workspace, scope: scope as Scope };
  });
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    port: parseInteger(env, 'PORT', 8080, 0),
    host: nonEmpty(env.HOST) ?? '127.0.0.1',
    dataDir: path.resolve(nonEmpty(env.FOLIO_DATA_DIR) ?? './data'),
    databaseUrl: nonEmpty(env.DATABASE_URL),
    embeddedCacheMb: parseInteger(env, 'FOLIO_EMBEDDED_CACHE_MB', DEFAULT_EMBEDDED_CACHE_MB, 8),
    // PostgreSQL refuses less than two 16 MiB segments.
    embeddedWalMb: parseInteger(env, 'FOLIO_EMBEDDED_WAL_MB', DEFAULT_EMBEDDED_WAL_MB, 32),
    redisUrl: nonEmpty(env.REDIS_URL),
    metricsToken: nonEmpty(env.FOLIO_METRICS_TOKEN),
    apiKeys: parseApiKeys(env.FOLIO_API_KEYS),
    rateLimit: parseInteger(env, 'FOLIO_RATE_LIMIT', 600, 0),
    bodyLimit: parseInteger(env, 'FOLIO_BODY_LIMIT_BYTES', 1024 * 1024, 1024),
    requestTimeoutMs: parseInteger(env, 'FOLIO_REQUEST_TIMEOUT_MS', 300_000, 100),
    logLevel: nonEmpty(env.LOG_LEVEL) ?? 'info',
    openaiApiKey: nonEmpty(env.OPENAI_API_KEY),
    openaiBaseUrl: nonEmpty(env.OPENAI_BASE_URL),
    embeddingModel: nonEmpty(env.FOLIO_EMBEDDING_MODEL) ?? 'text-embedding-3-small',
    llmModel: nonEmpty(env.FOLIO_LLM_MODEL),
    llmTimeoutMs: parseInteger(env, 'FOLIO_LLM_TIMEOUT_MS', 60000, 100),
    llmMaxAttempts: parseInteger(env, 'FOLIO_LLM_MAX_ATTEMPTS', 3, 1),
    llmMaxTokens: parseInteger(env, 'FOLIO_LLM_MAX_TOKENS', 1024, 16),
    llmPromptTokens: parseInteger(env, 'FOLIO_LLM_PROMPT_TOKENS', 8000, 500),
    urlAllowlist: (nonEmpty(env.FOLIO_URL_ALLOWLIST) ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter((h) => h !== ''),
    maxFileBytes: parseInteger(env, 'FOLIO_MAX_FILE_MB', 100, 1) * 1024 * 1024,
    workerConcurrency: parseInteger(env, 'FOLIO_WORKER_CONCURRENCY', 2, 1),
    parserThreads: parseInteger(env, 'FOLIO_PARSER_THREADS', 1, 1),
    // With the embedded engine (up to ~900 MB resident) and one parser thread, the process
    // stays under 2 GB whatever is uploaded.
    parserMemoryMb: parseInteger(env, 'FOLIO_PARSER_MEMORY_MB', 768, 64),
    indexPreload: parseSwitch(env, 'FOLIO_INDEX_PRELOAD', true),
    ocr: parseSwitch(env, 'FOLIO_OCR', true),
    ocrLangs: parseOcrLangs(env.FOLIO_OCR_LANGS),
    ocrThreads: parseInteger(env, 'FOLIO_OCR_THREADS', 1, 1),
    taskLeaseMs: parseInteger(env, 'FOLIO_TASK_LEASE_MS', 30000, 500),
    urlTimeoutMs: parseInteger(env, 'FOLIO_URL_TIMEOUT_MS', 60000, 100),
    shutdownGraceMs: parseInteger(env, 'FOLIO_SHUTDOWN_GRACE_MS', 20000, 0),
    webhookRetryBaseMs: parseInteger(env, 'FOLIO_WEBHOOK_RETRY_BASE_MS', 80000, 10),
    webhookTimeoutMs: parseInteger(env, 'FOLIO_WEBHOOK_TIMEOUT_MS', 10000, 100),
    webhookDisableAfterMs: parseInteger(env, 'FOLIO_WEBHOOK_DISABLE_AFTER_HOURS', 72, 1) * 3600_000,
  };
}
