// The delivery loop (worker role): claims due deliveries, POSTs each signed event under the URL
// guard with a deadline, and records every attempt with the delivery's next state: succeeded,
// retrying after a backoff, or failed after the last attempt. An endpoint whose attempts have
// all failed for long enough is disabled. Delivery is at least once: a process that dies between
// the POST and its record sends again, with the same Folio-Event-Id.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { hostname } from 'node:os';
import type { Kysely } from 'kysely';
import type { FastifyBaseLogger as Logger } from 'fastify';
import { postGuarded } from '../sources/index.js';
import type { Database } from '../store/schema.js';
import { claimDeliveries, nextDeliveryDueInMs, recordAttempt, releaseDeliveries, type ClaimedDelivery } from '../store/webhooks.js';
import { DEFAULT_RETRY_BASE_MS, MAX_DELIVERY_ATTEMPTS, retryDelayMs } from './backoff.js';
import { signatureHeader } from './signature.js';

export const USER_AGENT = 'Folio-Webhooks/1.0';

export type AttemptOutcome = 'succeeded' | 'retrying' | 'failed';

/** What `onAttempt` hears of each recorded attempt (metrics count them by outcome). */
export interface AttemptReport {
  outcome: AttemptOutcome;
  webhookId: number;
  eventType: string;
  attempt: number;
  statusCode: number | null;
  durationMs: number;
}

export interface DeliveryOptions {
  /** Hosts allowed past the private-address guard (FOLIO_URL_ALLOWLIST). */
  allowlist: string[];
  retryBaseMs: number;
  maxAttempts: number;
  /** One attempt's deadline. */
  timeoutMs: number;
  /** An endpoint whose attempts have all failed for this long is disabled. */
  disableAfterMs: number;
  /** Longest wait between looks for due deliveries (events committed by other processes). */
  pollMs: number;
  /** Attempts in flight at once. */
  concurrency: number;
  onAttempt?: (report: AttemptReport) => void;
}

export const DEFAULT_DELIVERY_OPTIONS: DeliveryOptions = {
  allowlist: [],
  retryBaseMs: DEFAULT_RETRY_BASE_MS,
  maxAttempts: MAX_DELIVERY_ATTEMPTS,
  timeoutMs: 10_000,
  disableAfterMs: 72 * 3600_000,
  pollMs: 1000,
  concurrency: 8,
};

/** A due delivery another process holds (SKIP LOCKED) is looked at again after this. */
const BUSY_WAIT_MS = 50;

function hours(ms: number): string {
  const h = ms / 3600_000;
  return h >= 1 ? `${Math.round(h * 10) / 10} h` : `${Math.round(ms / 1000)} s`;
}

export class WebhookDeliverer {
  readonly id = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly options: DeliveryOptions;
  private running = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private wake: (() => void) | null = null;
  /** Set by notify(): a look that was under way when it came may have missed the new events. */
  private woken = false;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly log: Logger,
    options: Partial<DeliveryOptions> = {},
  ) {
    this.options = { ...DEFAULT_DELIVERY_OPTIONS, ...options };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Asks the loop to look for due deliveries now (events were just committed in this process). */
  notify(): void {
    this.woken = true;
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.woken = false;
      const wait = await this.claimDue();
      if (wait === 0 || this.woken || !this.running) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  /** Starts the due deliveries there is room for; returns how long to wait before looking again. */
  private async claimDue(): Promise<number> {
    const free = this.options.concurrency - this.inFlight.size;
    if (free <= 0) return this.options.pollMs; // woken when one finishes
    try {
      const due = await nextDeliveryDueInMs(this.db);
      if (due === null) return this.options.pollMs;
      if (due > 0) return Math.min(this.options.pollMs, Math.ceil(due));
      // The lease outlasts an attempt's deadline, so a live claim never lapses.
      const claimed = await claimDeliveries(this.db, this.id, free, this.options.timeoutMs + 30_000);
      for (const delivery of claimed) this.begin(delivery);
      return claimed.length > 0 ? 0 : BUSY_WAIT_MS;
    } catch (err) {
      this.log.warn({ err }, 'could not claim webhook deliveries');
      return this.options.pollMs;
    }
  }

  private begin(delivery: ClaimedDelivery): void {
    const done: Promise<void> = this.attempt(delivery)
      .catch((err: unknown) => this.log.error({ err, delivery: delivery.id }, 'could not record a webhook delivery attempt; it will be sent again'))
      .finally(() => {
        this.inFlight.delete(done);
        this.notify();
      });
    this.inFlight.add(done);
  }

  private async attempt(d: ClaimedDelivery): Promise<void> {
    const attempt = d.attempts + 1;
    const body = JSON.stringify({ id: d.event_id, type: d.event_type, created_at: new Date(d.event_created_at).toISOString(), data: d.event_data });
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'folio-event-id': d.event_id,
      'folio-signature': signatureHeader(d.secret, Math.floor(Date.now() / 1000), body),
    };
    const started = performance.now();
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      statusCode = await postGuarded(d.url, body, { allowlist: this.options.allowlist, timeoutMs: this.options.timeoutMs, headers, signal: this.abort.signal });
      if (statusCode < 200 || statusCode > 299) error = `The endpoint answered ${statusCode} ${http.STATUS_CODES[statusCode] ?? ''}`.trimEnd();
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }
    // Cut short by shutdown: not an attempt; the delivery is handed back.
    if (this.abort.signal.aborted) return;
    const durationMs = Math.round(performance.now() - started);
    const delay = error === null ? null : retryDelayMs(attempt, this.options.retryBaseMs, this.options.maxAttempts);
    const outcome: AttemptOutcome = error === null ? 'succeeded' : delay === null ? 'failed' : 'retrying';
    const { recorded, disabled } = await recordAttempt(this.db, {
      deliveryId: d.id,
      claimer: this.id,
      attempt,
      statusCode,
      durationMs,
      error,
      outcome,
      retryInMs: delay ?? 0,
      disableAfterMs: this.options.disableAfterMs,
      disabledReason: `Every delivery attempt failed for ${hours(this.options.disableAfterMs)} with no success; the last one: ${error}`,
    });
    if (!recorded) return;
    if (disabled) this.log.warn({ webhook: d.webhook_id, url: d.url }, 'webhook endpoint disabled: every attempt failed for too long');
    this.options.onAttempt?.({ outcome, webhookId: d.webhook_id, eventType: d.event_type, attempt, statusCode, durationMs });
  }

  /** Stops claiming, lets attempts in flight finish within their deadline, and hands back any left. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.notify();
    await this.loop;
    const settled = Promise.all([...this.inFlight]);
    const timedOut = await Promise.race([
      settled.then(() => false),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(true), this.options.timeoutMs + 1000).unref()),
    ]);
    if (timedOut) {
      this.abort.abort();
      await settled;
    }
    await releaseDeliveries(this.db, this.id).catch((err: unknown) => this.log.warn({ err }, 'could not hand back webhook deliveries'));
  }
}
