// Which statements the embedded engine counts as changes the page index reads (`mayWrite`): a
// missed one would leave a search without a catch-up it needs; a needless one costs a catch-up.
import { describe, expect, it } from 'vitest';
import { mayWrite } from '../../src/store/engine.js';

describe('the embedded engine counts a statement as a change the page index reads', () => {
  it.each([
    ['insert into "documents" ("workspace_id") values ($1) returning "id"'],
    ['insert into "pages" ("document_id", "content") values ($1, $2)'],
    ['delete from "documents" where "id" in ($1, $2) returning "id"'],
    ['update "documents" set "metadata" = $1 where "id" = $2'],
    ['DELETE FROM workspaces WHERE id = $1'],
    ['SELECT id, task_identifier FROM insert_embedded_documents($1::int[])'],
    ['WITH moved AS (UPDATE tasks SET status = $1 RETURNING document_id) DELETE FROM pages WHERE document_id IN (SELECT document_id FROM moved)'],
    ['update "tasks" set "status" = $1 where "document_id" in (select "id" from "documents" where "workspace_id" = $2)'],
    ['insert into "api_keys" ("name") values ($1)'],
    ['CREATE INDEX pages_x ON pages (id)'],
  ])('%s', (text) => expect(mayWrite(text)).toBe(true));
});

describe('the embedded engine does not count', () => {
  it.each([
    ['select "id" from "documents" where "workspace_id" = $1'],
    ['  SELECT snapshot, xmin FROM page_changes_since($1, $2::xid8, $3)'],
    ['BEGIN'],
    ['COMMIT'],
    ['ROLLBACK'],
    ['update "tasks" set "progress" = greatest(progress, $1), "message" = $2 where "identifier" = $3'],
    ['update "tasks" set "lease_until" = clock_timestamp() + $1 * interval \'1 millisecond\' where "identifier" = $2'],
    ['\n    UPDATE tasks SET status = \'PROCESSING\', attempts = attempts + 1 WHERE identifier = (SELECT identifier FROM tasks LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING identifier'],
    ['insert into "tasks" ("identifier", "workspace_id", "kind") values ($1, $2, $3)'],
    ['insert into "webhook_deliveries" ("event_id") values ($1)'],
    ['update "webhook_deliveries" set "status" = $1 where "id" = $2'],
  ])('%s', (text) => expect(mayWrite(text)).toBe(false));
});
