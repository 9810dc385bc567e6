// Queries on the webhook tables: endpoints per workspace, events with one delivery per
// subscribed endpoint (written in the caller's transaction), the delivery loop's claims and
// the record of each attempt.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './schema.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface NewWebhook {
  workspaceId: number;
  url: string;
  events: string[];
  description: string | null;
  secret: string;
}

export interface WebhookRow {
  id: number;
  url: string;
  events: string[];
  description: string | null;
  created_at: Date;
  last_success_at: Date | null;
  failing_since: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
}

const WEBHOOK_COLUMNS = ['id', 'url', 'events', 'description', 'created_at', 'last_success_at', 'failing_since', 'disabled_at', 'disabled_reason'] as const;

export async function insertWebhook(db: Db, hook: NewWebhook): Promise<WebhookRow> {
  return db
    .insertInto('webhooks')
    .values({ workspace_id: hook.workspaceId, url: hook.url, events: hook.events, description: hook.description, secret: hook.secret })
    .returning(WEBHOOK_COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function listWebhooks(db: Db, workspaceId: number): Promise<WebhookRow[]> {
  return db.selectFrom('webhooks').select(WEBHOOK_COLUMNS).where('workspace_id', '=', workspaceId).orderBy('id').execute();
}

export async function webhookExists(db: Db, workspaceId: number, id: number): Promise<boolean> {
  const row = await db.selectFrom('webhooks').select('id').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return row !== undefined;
}

/** Deletes the endpoint with its deliveries; false when the workspace has no such endpoint. */
export async function deleteWebhook(db: Db, workspaceId: number, id: number): Promise<boolean> {
  const result = await db.deleteFrom('webhooks').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export interface NewWebhookEvent {
  id: string;
  workspaceId: number;
  type: string;
  data: Record<string, unknown>;
}

/**
 * Records events with one pending delivery per active endpoint of their workspace that
 * subscribes to their type; an event no endpoint wants is not stored. Returns the number of
 * deliveries created. Called in every ingest and deletion transaction, mostly for workspaces
 * without endpoints: that case is one indexed read, as cheap as a statement gets.
 */
export async function insertEvents(db: Db, events: NewWebhookEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const workspaces = [...new Set(events.map((e) => e.workspaceId))];
  const hooks = await sql<{ id: number; workspace_id: number; events: string[] }>`
    SELECT id, workspace_id, events FROM webhooks WHERE workspace_id = ANY(${workspaces}::integer[]) AND disabled_at IS NULL
  `.execute(db);
  const targets = events.flatMap((event) =>
    hooks.rows.filter((h) => h.workspace_id === event.workspaceId && h.events.includes(event.type)).map((h) => ({ event, webhookId: h.id })),
  );
  if (targets.length === 0) return 0;
  const wanted = [...new Set(targets.map((t) => t.event))];
  await db
    .insertInto('webhook_events')
    .values(wanted.map((e) => ({ id: e.id, workspace_id: e.workspaceId, type: e.type, data: JSON.stringify(e.data) })))
    .execute();
  await db
    .insertInto('webhook_deliveries')
    .values(targets.map((t) => ({ webhook_id: t.webhookId, event_id: t.event.id, status: 'pending' })))
    .execute();
  return targets.length;
}

export interface DeliveryRow {
  id: number;
  event_id: string;
  event_type: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  last_status_code: number | null;
  last_duration_ms: number | null;
  last_error: string | null;
  last_attempt_at: Date | null;
  next_attempt_at: Date | null;
  created_at: Date;
}

export interface AttemptRow {
  delivery_id: number;
  attempt: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  attempted_at: Date;
}

/** The endpoint's latest deliveries, newest first, with their attempts in order. */
export async function listDeliveries(db: Db, webhookId: number, limit: number): Promise<{ deliveries: DeliveryRow[]; attempts: AttemptRow[] }> {
  const rows = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .select([
      'd.id',
      'd.event_id',
      'e.type as event_type',
      'd.status',
      'd.attempts',
      'd.last_status_code',
      'd.last_duration_ms',
      'd.last_error',
      'd.last_attempt_at',
      'd.next_attempt_at',
      'd.created_at',
    ])
    .where('d.webhook_id', '=', webhookId)
    .orderBy('d.id', 'desc')
    .limit(limit)
    .execute();
  const deliveries = rows.map((r) => ({ ...r, status: r.status as DeliveryRow['status'] }));
  if (deliveries.length === 0) return { deliveries, attempts: [] };
  const attempts = await db
    .selectFrom('webhook_attempts')
    .select(['delivery_id', 'attempt', 'status_code', 'duration_ms', 'error', 'attempted_at'])
    .where('delivery_id', 'in', deliveries.map((d) => d.id))
    .orderBy('delivery_id')
    .orderBy('attempt')
    .execute();
  return { deliveries, attempts };
}

export interface ClaimedDelivery {
  id: number;
  /** Attempts recorded before this one. */
  attempts: number;
  webhook_id: number;
  url: string;
  secret: string;
  event_id: string;
  event_type: string;
  event_created_at: Date;
  event_data: Record<string, unknown>;
}

/**
 * Claims up to `limit` due deliveries of active endpoints for `claimer`: each is moved
 * `leaseMs` into the future, so it comes due again if the claimer dies before recording the
 * attempt. SKIP LOCKED lets several processes claim at once.
 */
export async function claimDeliveries(db: Db, claimer: string, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
  const result = await sql<ClaimedDelivery>`
    UPDATE webhook_deliveries d
    SET claimed_by = ${claimer}, next_attempt_at = clock_timestamp() + ${leaseMs} * interval '1 millisecond'
    FROM webhooks h, webhook_events e
    WHERE d.id IN (
      SELECT due.id FROM webhook_deliveries due JOIN webhooks active ON active.id = due.webhook_id
      WHERE due.status = 'pending' AND due.next_attempt_at <= clock_timestamp() AND active.disabled_at IS NULL
      ORDER BY due.next_attempt_at
      LIMIT ${limit}
      FOR UPDATE OF due SKIP LOCKED
    ) AND h.id = d.webhook_id AND e.id = d.event_id
    RETURNING d.id, d.attempts, h.id AS webhook_id, h.url, h.secret,
      e.id AS event_id, e.type AS event_type, e.created_at AS event_created_at, e.data AS event_data
  `.execute(db);
  return result.rows;
}

/** Milliseconds until the next delivery is due (0 if one is due now); null when none is pending. */
export async function nextDeliveryDueInMs(db: Db): Promise<number | null> {
  // Not greatest(0, ...) in SQL: it skips a NULL, and would call "nothing pending" due now.
  const result = await sql<{ due_in: number | null }>`
    SELECT (extract(epoch FROM min(d.next_attempt_at) - clock_timestamp()) * 1000)::float8 AS due_in
    FROM webhook_deliveries d JOIN webhooks h ON h.id = d.webhook_id
    WHERE d.status = 'pending' AND h.disabled_at IS NULL
  `.execute(db);
  const due = result.rows[0]?.due_in ?? null;
  return due === null ? null : Math.max(0, due);
}

export interface AttemptResult {
  deliveryId: number;
  claimer: string;
  attempt: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** succeeded; retrying after `retryInMs`; or failed for good. */
  outcome: 'succeeded' | 'retrying' | 'failed';
  retryInMs: number;
  /** A failure disables the endpoint when its attempts have all failed for this long. */
  disableAfterMs: number;
  disabledReason: string;
}

/**
 * Records an attempt of a delivery `claimer` holds, with the delivery's new state and the
 * endpoint's health, in one transaction. `recorded` is false when the claim had lapsed (the
 * delivery was taken over, finished or deleted); `disabled` when this failure disabled the
 * endpoint (its pending deliveries then fail too).
 */
export async function recordAttempt(db: Kysely<Database>, a: AttemptResult): Promise<{ recorded: boolean; disabled: boolean }> {
  return db.transaction().execute(async (trx) => {
    const delivery = await trx
      .updateTable('webhook_deliveries')
      .set({
        status: a.outcome === 'retrying' ? 'pending' : a.outcome,
        attempts: a.attempt,
        next_attempt_at: a.outcome === 'retrying' ? sql<Date>`clock_timestamp() + ${a.retryInMs} * interval '1 millisecond'` : null,
        claimed_by: null,
        last_status_code: a.statusCode,
        last_duration_ms: a.durationMs,
        last_error: a.error,
        last_attempt_at: sql<Date>`clock_timestamp()`,
      })
      .where('id', '=', a.deliveryId)
      .where('claimed_by', '=', a.claimer)
      .where('status', '=', 'pending')
      .returning('webhook_id')
      .executeTakeFirst();
    if (!delivery) return { recorded: false, disabled: false };
    await trx
      .insertInto('webhook_attempts')
      .values({ delivery_id: a.deliveryId, attempt: a.attempt, status_code: a.statusCode, duration_ms: a.durationMs, error: a.error })
      .execute();
    if (a.outcome === 'succeeded') {
      await trx
        .updateTable('webhooks')
        .set({ last_success_at: sql<Date>`clock_timestamp()`, failing_since: null })
        .where('id', '=', delivery.webhook_id)
        .execute();
      return { recorded: true, disabled: false };
    }
    const hook = await trx
      .updateTable('webhooks')
      .set({ failing_since: sql<Date>`coalesce(failing_since, clock_timestamp())` })
      .where('id', '=', delivery.webhook_id)
      .where('disabled_at', 'is', null)
      .returning(sql<boolean>`failing_since <= clock_timestamp() - ${a.disableAfterMs} * interval '1 millisecond'`.as('overdue'))
      .executeTakeFirst();
    if (!hook?.overdue) return { recorded: true, disabled: false };
    await trx
      .updateTable('webhooks')
      .set({ disabled_at: sql<Date>`clock_timestamp()`, disabled_reason: a.disabledReason })
      .where('id', '=', delivery.webhook_id)
      .execute();
    await trx
      .updateTable('webhook_deliveries')
      .set({ status: 'failed', next_attempt_at: null, claimed_by: null, last_error: sql<string>`coalesce(last_error || '; ', '') || 'not sent again: the endpoint was disabled'` })
      .where('webhook_id', '=', delivery.webhook_id)
      .where('status', '=', 'pending')
      .execute();
    return { recorded: true, disabled: true };
  });
}

/** Hands the claimer's deliveries back (shutdown): due again at once. */
export async function releaseDeliveries(db: Db, claimer: string): Promise<number> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ claimed_by: null, next_attempt_at: sql<Date>`clock_timestamp()` })
    .where('claimed_by', '=', claimer)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
