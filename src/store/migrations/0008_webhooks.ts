// Signed webhooks: endpoints per workspace, the events they subscribe to, and one delivery per
// (endpoint, event) with each attempt recorded. Events and deliveries are written in the
// transaction of the change that causes them (a task's completion or failure, a deletion), so
// a crash cannot lose one; the delivery loop claims due deliveries for the time of a lease.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE webhooks (
      id bigserial PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      url text NOT NULL,
      events text[] NOT NULL,
      description text,
      -- Kept as issued: deliveries are signed with it (HMAC), so it cannot be hashed.
      secret text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      last_success_at timestamptz,
      -- The first failed attempt since the last success: the endpoint is disabled once this is old enough.
      failing_since timestamptz,
      disabled_at timestamptz,
      disabled_reason text
    );
    CREATE INDEX webhooks_workspace_idx ON webhooks (workspace_id, id);

    -- Written only when some endpoint subscribes to it; the body's data, exactly as sent.
    CREATE TABLE webhook_events (
      id text PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      type text NOT NULL,
      data json NOT NULL,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    );

    CREATE TABLE webhook_deliveries (
      id bigserial PRIMARY KEY,
      webhook_id bigint NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
      event_id text NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      -- When it is due; a claim moves it past the claimer's lease, so a dead process's claim lapses.
      next_attempt_at timestamptz DEFAULT clock_timestamp(),
      claimed_by text,
      last_status_code integer,
      last_duration_ms integer,
      last_error text,
      last_attempt_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
    CREATE INDEX webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id, id);
    CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id);

    CREATE TABLE webhook_attempts (
      delivery_id bigint NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
      attempt integer NOT NULL,
      status_code integer,
      duration_ms integer NOT NULL,
      error text,
      attempted_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (delivery_id, attempt)
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE webhook_attempts, webhook_deliveries, webhook_events, webhooks`.execute(db);
}
