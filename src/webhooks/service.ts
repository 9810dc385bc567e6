// Webhook endpoints of a workspace: creation (the URL checked by the delivery guard, the secret
// shown once), the list (never the secrets), deletion, and the latest deliveries of one.
import type { Kysely } from 'kysely';
import { errors } from '../errors.js';
import { checkUrl, refusalOf } from '../sources/index.js';
import type { Database } from '../store/schema.js';
import { assertStorableText } from '../text/json-text.js';
import { deleteWebhook as deleteRow, insertWebhook, listDeliveries, listWebhooks as listRows, webhookExists, type WebhookRow } from '../store/webhooks.js';
import type { WebhookEventType } from './events.js';
import { newSecret } from './signature.js';

export interface WebhookServiceDeps {
  db: Kysely<Database>;
  /** Hosts allowed past the private-address guard (FOLIO_URL_ALLOWLIST). */
  urlAllowlist: string[];
  /** Bound on resolving the host when an endpoint is created. */
  resolveTimeoutMs: number;
}

export interface WebhookInput {
  url: string;
  events: WebhookEventType[];
  description?: string | null;
}

export interface WebhookView {
  id: number;
  url: string;
  events: string[];
  description: string | null;
  created_at: string;
  last_success_at: string | null;
  failing_since: string | null;
  disabled: boolean;
  disabled_at: string | null;
  disabled_reason: string | null;
}

const iso = (date: Date | null) => (date ? date.toISOString() : null);

function view(row: WebhookRow): WebhookView {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    created_at: row.created_at.toISOString(),
    last_success_at: iso(row.last_success_at),
    failing_since: iso(row.failing_since),
    disabled: row.disabled_at !== null,
    disabled_at: iso(row.disabled_at),
    disabled_reason: row.disabled_reason,
  };
}

/**
 * Creates an endpoint: 422 for a URL that is not absolute http(s), 400 when the delivery guard
 * refuses it (a private address not in FOLIO_URL_ALLOWLIST, a host that does not resolve).
 * The secret is in this answer only.
 */
export async function createWebhook(deps: WebhookServiceDeps, workspaceId: number, input: WebhookInput): Promise<WebhookView & { secret: string }> {
  checkUrl(input.url);
  assertStorableText(input.description ?? null, ['description']);
  const refusal = await refusalOf(input.url, deps.urlAllowlist, deps.resolveTimeoutMs);
  if (refusal) throw errors.invalidRequest(refusal);
  const secret = newSecret();
  const row = await insertWebhook(deps.db, {
    workspaceId,
    url: input.url,
    events: [...new Set(input.events)],
    description: input.description ?? null,
    secret,
  });
  return { ...view(row), secret };
}

export async function listWebhooks(db: Kysely<Database>, workspaceId: number): Promise<WebhookView[]> {
  return (await listRows(db, workspaceId)).map(view);
}

export async function deleteWebhook(db: Kysely<Database>, workspaceId: number, id: number): Promise<{ id: number; deleted: true }> {
  if (!(await deleteRow(db, workspaceId, id))) throw errors.notFound(`Webhook ${id}`);
  return { id, deleted: true };
}

export interface AttemptView {
  attempt: number;
  response_code: number | null;
  duration_ms: number;
  error: string | null;
  attempted_at: string;
}

export interface DeliveryView {
  id: number;
  event_id: string;
  event_type: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempt_count: number;
  response_code: number | null;
  duration_ms: number | null;
  error: string | null;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  created_at: string;
  attempts: AttemptView[];
}

/** The endpoint's latest deliveries, newest first; the last attempt's outcome on each, and every attempt. */
export async function webhookDeliveries(db: Kysely<Database>, workspaceId: number, id: number, limit: number): Promise<DeliveryView[]> {
  if (!(await webhookExists(db, workspaceId, id))) throw errors.notFound(`Webhook ${id}`);
  const { deliveries, attempts } = await listDeliveries(db, id, limit);
  const byDelivery = new Map<number, AttemptView[]>();
  for (const a of attempts) {
    const list = byDelivery.get(a.delivery_id) ?? [];
    list.push({ attempt: a.attempt, response_code: a.status_code, duration_ms: a.duration_ms, error: a.error, attempted_at: a.attempted_at.toISOString() });
    byDelivery.set(a.delivery_id, list);
  }
  return deliveries.map((d) => ({
    id: d.id,
    event_id: d.event_id,
    event_type: d.event_type,
    status: d.status,
    attempt_count: d.attempts,
    response_code: d.last_status_code,
    duration_ms: d.last_duration_ms,
    error: d.last_error,
    last_attempt_at: iso(d.last_attempt_at),
    next_attempt_at: d.status === 'pending' ? iso(d.next_attempt_at) : null,
    created_at: d.created_at.toISOString(),
    attempts: byDelivery.get(d.id) ?? [],
  }));
}
