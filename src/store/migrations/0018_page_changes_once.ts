// page_changes_since read every change from the caller's xmin on. On the server, a transaction
// open anywhere (another client's ingest, another database's session) holds xmin back, so each
// catch-up read again the changes the last one had applied: a re-embedded page (deleted and
// inserted again) was read from the store at every search until the horizon moved, and a
// document change kept marking the workspace changed, which threw away its filter cache. A change
// whose transaction the caller's last snapshot (`seen`) already saw is now left out.
import { sql, type Kysely } from 'kysely';
import * as m0011 from './0011_page_changes_function.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION page_changes_since(ws int, since xid8, seen text)
    RETURNS TABLE (snapshot text, xmin text, documents_changed boolean, kind text, page_id bigint)
    LANGUAGE plpgsql STABLE AS $$
    DECLARE
      current pg_snapshot := pg_current_snapshot();
      -- The first read of a workspace has seen nothing.
      before pg_snapshot := CASE WHEN seen = '' THEN NULL ELSE seen::pg_snapshot END;
    BEGIN
      snapshot := current::text;
      xmin := pg_snapshot_xmin(current)::text;
      documents_changed := false;
      IF snapshot = seen THEN
        RETURN NEXT;
        RETURN;
      END IF;
      RETURN QUERY
        SELECT page_changes_since.snapshot, page_changes_since.xmin,
          EXISTS (
            SELECT 1 FROM documents d WHERE d.workspace_id = ws AND d.txid >= since
              AND (before IS NULL OR NOT pg_visible_in_snapshot(d.txid, before))
          ),
          c.kind, c.page_id
        FROM (SELECT 1) AS one
        LEFT JOIN (
          SELECT 'i' AS kind, p.id AS page_id, p.change_seq FROM pages p
            WHERE p.workspace_id = ws AND p.txid >= since AND (before IS NULL OR NOT pg_visible_in_snapshot(p.txid, before))
          UNION ALL
          SELECT 'd', t.page_id, t.change_seq FROM page_tombstones t
            WHERE t.workspace_id = ws AND t.txid >= since AND (before IS NULL OR NOT pg_visible_in_snapshot(t.txid, before))
        ) AS c ON true
        ORDER BY c.change_seq;
    END $$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP FUNCTION page_changes_since(int, xid8, text)`.execute(db);
  await m0011.up(db);
}
