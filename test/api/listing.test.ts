// The document and task listings over HTTP, on both engines: keyset paging through 2,500
// documents while another client adds and deletes, each filter, the limits, cursors that the
// listing did not issue (422), the tasks' filters and the retry of a failed upload.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, call, startTestApp, type TestApp } from '../helpers/app.js';
import { multipartBody } from '../helpers/multipart.js';
import { ENGINES } from '../helpers/stores.js';
import { waitForTask } from '../helpers/tasks.js';

interface Listed {
  id: number;
  external_id: string | null;
  version: number;
  file_name: string | null;
  content_type: string | null;
  page_count: number;
  document_metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

interface ListedTask {
  task_identifier: string;
  kind: string;
  status: string;
  title: string;
  message: string;
  progress: number;
  file_name: string | null;
  created_at: string;
}

const SEEDED = 2500;

/** A short embedding (a one-hot of 1536): a thousand of them make a body of a few MB. */
function oneHot(i: number): number[] {
  const v = new Array<number>(1536).fill(0);
  v[i % 1536] = 1;
  return v;
}

const query = (params: Record<string, unknown>) =>
  new URLSearchParams(Object.entries(params).map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)])).toString();

describe.each(ENGINES)('listings on %s', (engine) => {
  let t: TestApp;

  async function list(params: Record<string, unknown> = {}, key: string = KEYS.read) {
    const res = await call(t.app, 'GET', `/api/v1/documents?${query(params)}`, { key });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as { documents: Listed[]; next_cursor: string | null };
  }

  async function listAll(params: Record<string, unknown> = {}): Promise<Listed[]> {
    const all: Listed[] = [];
    let cursor: string | null = null;
    do {
      const page = await list({ limit: 1000, ...params, ...(cursor && { cursor }) });
      all.push(...page.documents);
      cursor = page.next_cursor;
    } while (cursor);
    return all;
  }

  async function ingestBatch(documents: Record<string, unknown>[], key: string = KEYS.write): Promise<number[]> {
    const res = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding/batch', { key, body: { documents } });
    expect(res.statusCode, res.body.slice(0, 500)).toBe(200);
    const data = res.json().data as { failed: number; results: { document: { document_id: number } }[] };
    expect(data.failed).toBe(0);
    return data.results.map((r) => r.document.document_id);
  }

  async function ingestOne(body: Record<string, unknown>, key: string = KEYS.write): Promise<number> {
    const res = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', { key, body: { embedding: oneHot(1), content: 'A note.', ...body } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data.document_id as number;
  }

  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('GET /documents', () => {
    // Seeded document ids by their metadata's n, and those deleted since.
    const seeded: number[] = [];
    const gone = new Set<number>();

    beforeAll(async () => {
      for (let start = 0; start < SEEDED; start += 1000) {
        const documents = Array.from({ length: Math.min(1000, SEEDED - start) }, (_, j) => {
          const i = start + j;
          return { embedding: oneHot(i), content: `Document ${i}.`, metadata: { n: i, group: i % 5 === 0 ? 'five' : 'other' } };
        });
        seeded.push(...(await ingestBatch(documents)));
      }
    });

    it('pages through 2,500 documents while another client adds and deletes: each that existed throughout is seen exactly once', async () => {
      const deleting = seeded.filter((_, i) => i % 7 === 3);
      const throughout = new Set(seeded.filter((_, i) => i % 7 !== 3));
      const added: number[] = [];
      let paging = true;
      const other = (async () => {
        for (let i = 0; paging || i < 10; i++) {
          added.push(await ingestOne({ content: `Added while paging ${i}.` }));
          const victim = deleting[i];
          if (victim !== undefined) {
            const res = await call(t.app, 'DELETE', `/api/v1/documents/internal/${victim}`);
            expect(res.statusCode).toBe(200);
            gone.add(victim);
          }
          if (i % 3 === 2) await ingestOne({ content: 'Added and deleted.' }).then((id) => call(t.app, 'DELETE', `/api/v1/documents/internal/${id}`));
        }
      })();
      const seen: number[] = [];
      const createdAt: number[] = [];
      let cursor: string | null = null;
      let pages = 0;
      try {
        do {
          const page = await list({ limit: 97, ...(cursor && { cursor }) });
          seen.push(...page.documents.map((d) => d.id));
          createdAt.push(...page.documents.map((d) => Date.parse(d.created_at)));
          cursor = page.next_cursor;
          pages++;
          // A turn for the other client between pages.
          await new Promise((r) => setTimeout(r, 1));
        } while (cursor);
      } finally {
        paging = false;
        await other;
      }
      expect(pages).toBeGreaterThanOrEqual(Math.ceil(throughout.size / 97));
      expect(new Set(seen).size).toBe(seen.length);
      const seenSet = new Set(seen);
      const missing = [...throughout].filter((id) => !seenSet.has(id));
      expect(missing).toEqual([]);
      // Newest first. Not by id: on the server engine, batches written by concurrent
      // transactions take their ids and their creation times in different orders.
      expect(createdAt).toEqual([...createdAt].sort((a, b) => b - a));

      for (const id of added) await call(t.app, 'DELETE', `/api/v1/documents/internal/${id}`);
    });

    it('describes each document: version, page count, file name and type, metadata and times', async () => {
      const first = await ingestOne({ external_id: 'listed-versions', metadata: { v: 1 } });
      const second = await ingestOne({ external_id: 'listed-versions', metadata: { v: 2 } });
      const latest = await list({ external_id: 'listed-versions' });
      expect(latest.documents).toHaveLength(1);
      expect(latest.documents[0]).toMatchObject({
        id: second,
        external_id: 'listed-versions',
        version: 2,
        page_count: 1,
        file_name: null,
        content_type: null,
        file_url: null,
        document_metadata: { v: 2 },
      });
      expect(new Date(latest.documents[0].created_at).toISOString()).toBe(latest.documents[0].created_at);
      const all = await list({ external_id: 'listed-versions', latest_only: false });
      expect(all.documents.map((d) => [d.id, d.version])).toEqual([
        [second, 2],
        [first, 1],
      ]);
      // latest_only by default drops the older version from the whole listing too.
      const ids = (await listAll()).map((d) => d.id);
      expect(ids).toContain(second);
      expect(ids).not.toContain(first);
      const everything = (await listAll({ latest_only: false })).map((d) => d.id);
      expect(everything).toContain(first);
    });

    it('sorts by created_at or updated_at, either way', async () => {
      const a = await ingestOne({ metadata: { sorted: 'yes', name: 'a' } });
      const b = await ingestOne({ metadata: { sorted: 'yes', name: 'b' } });
      const filter = { metadata_filter: { sorted: 'yes' } };
      expect((await list(filter)).documents.map((d) => d.id)).toEqual([b, a]);
      expect((await list({ ...filter, order: 'asc' })).documents.map((d) => d.id)).toEqual([a, b]);

      const c = await ingestOne({ external_id: 'sorted-c', metadata: { sorted: 'yes', name: 'c' } });
      const d = await ingestOne({ metadata: { sorted: 'yes', name: 'd' } });
      const res = await call(t.app, 'PATCH', `/api/v1/documents/external/sorted-c/metadata`, { body: { metadata: { touched: true } } });
      expect(res.statusCode).toBe(200);
      await call(t.app, 'DELETE', `/api/v1/documents/internal/${a}`);
      // c was created before d but updated after it.
      expect((await list({ ...filter, sort: 'updated_at' })).documents.map((x) => x.id)).toEqual([c, d, b]);
      expect((await list({ ...filter, sort: 'created_at' })).documents.map((x) => x.id)).toEqual([d, c, b]);
      const page1 = await list({ ...filter, sort: 'updated_at', order: 'asc', limit: 2 });
      expect(page1.documents.map((x) => x.id)).toEqual([b, d]);
      const page2 = await list({ ...filter, sort: 'updated_at', order: 'asc', limit: 2, cursor: page1.next_cursor });
      expect(page2.documents.map((x) => x.id)).toEqual([c]);
      expect(page2.next_cursor).toBeNull();
    });

    it('filters by metadata, creation and update times, external id and ids', async () => {
      const fives = await listAll({ metadata_filter: { group: 'five', n: { $lt: 100 } } });
      expect(fives.map((d) => d.document_metadata.n)).toEqual(Array.from({ length: 20 }, (_, i) => 95 - 5 * i).filter((n) => !gone.has(seeded[n])));
      const inList = await list({ metadata_filter: { n: { $in: [1, 2, 4] } } });
      expect(inList.documents.map((d) => d.document_metadata.n)).toEqual([4, 2, 1]);

      const x = await ingestOne({ external_id: 'dated', metadata: { dated: true } });
      const created = (await list({ external_id: 'dated' })).documents[0].created_at;
      const since = created.replace('Z', '');
      expect((await list({ created_at_filter: { $gte: since } })).documents.map((d) => d.id)).toEqual([x]);
      expect((await list({ updated_at_filter: { $gte: since } })).documents.map((d) => d.id)).toEqual([x]);
      expect((await list({ created_at_filter: { $lt: since }, metadata_filter: { dated: true } })).documents).toEqual([]);
      expect((await list({ ids: `${seeded[0]},${seeded[1]},${x}` })).documents.map((d) => d.id)).toEqual([x, seeded[1], seeded[0]]);
      expect((await list({ external_id: 'no-such-id' })).documents).toEqual([]);
    });

    it('refuses limits out of range, bad filters and cursors it did not issue', async () => {
      const expect422 = async (params: Record<string, unknown>, loc: string[]) => {
        const res = await call(t.app, 'GET', `/api/v1/documents?${query(params)}`);
        expect(res.statusCode, res.body).toBe(422);
        expect(res.json().detail[0].loc).toEqual(loc);
      };
      await expect422({ limit: 0 }, ['query', 'limit']);
      await expect422({ limit: 1001 }, ['query', 'limit']);
      await expect422({ limit: 'ten' }, ['query', 'limit']);
      await expect422({ sort: 'name' }, ['query', 'sort']);
      await expect422({ order: 'up' }, ['query', 'order']);
      await expect422({ cursor: 'not a cursor' }, ['query', 'cursor']);
      await expect422({ cursor: Buffer.from('{"v":1}').toString('base64url') }, ['query', 'cursor']);
      await expect422({ cursor: Buffer.from('[1,2]').toString('base64url') }, ['query', 'cursor']);
      await expect422({ metadata_filter: '{"n":' }, ['query', 'metadata_filter']);
      await expect422({ metadata_filter: '[1]' }, ['query', 'metadata_filter']);
      await expect422({ ids: '1,x' }, ['query', 'ids']);
      const { next_cursor } = await list({ limit: 1 });
      await expect422({ cursor: next_cursor, order: 'asc' }, ['query', 'cursor']);
      await expect422({ cursor: next_cursor, sort: 'updated_at' }, ['query', 'cursor']);
      expect((await list({ limit: 1000 })).documents).toHaveLength(1000);
      expect((await list()).documents).toHaveLength(50);

      const res = await call(t.app, 'GET', `/api/v1/documents?${query({ metadata_filter: { n: { $bogus: 1 } } })}`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ success: false, error: { error_code: 'INVALID_FILTER' } });
    });

    it("lists only the key's workspace, and needs a key", async () => {
      const beta = await ingestOne({ metadata: { beta: true } }, KEYS.other);
      const listed = await list({}, KEYS.other);
      expect(listed.documents.map((d) => d.id)).toEqual([beta]);
      expect((await listAll()).map((d) => d.id)).not.toContain(beta);
      expect((await call(t.app, 'GET', '/api/v1/documents', { key: null })).statusCode).toBe(401);
    });
  });

  describe('GET /tasks', () => {
    async function tasks(params: Record<string, unknown> = {}) {
      const res = await call(t.app, 'GET', `/api/v1/tasks?${query(params)}`, { key: KEYS.other });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data as { tasks: ListedTask[]; next_cursor: string | null };
    }

    async function upload(name: string, text: string): Promise<string> {
      const form = multipartBody({}, { filename: name, contentType: 'text/plain', data: Buffer.from(text) });
      const res = await call(t.app, 'POST', '/api/v1/documents/ingest', { key: KEYS.other, rawBody: form.payload, headers: form.headers });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().data.task_identifier as string;
    }

    it('lists tasks newest first with kind and file name, filtered by status, kind and creation time, and retries a failed upload', async () => {
      const good = await upload('notes.txt', 'Paged listings are stable.');
      const bad = await upload('blank.txt', '   \n\n  ');
      expect(await waitForTask(t.app, good, 60_000, KEYS.other)).toMatchObject({ status: 'COMPLETED' });
      expect(await waitForTask(t.app, bad, 60_000, KEYS.other)).toMatchObject({ status: 'FAILED' });

      const all = await tasks();
      const ids = all.tasks.map((task) => task.task_identifier);
      expect(ids.indexOf(bad)).toBeLessThan(ids.indexOf(good));
      expect(all.tasks.find((task) => task.task_identifier === good)).toMatchObject({ kind: 'IngestFile', status: 'COMPLETED', progress: 100, file_name: 'notes.txt', title: 'Ingest notes.txt' });
      const failed = await tasks({ status: 'FAILED' });
      expect(failed.tasks.map((task) => task.task_identifier)).toEqual([bad]);
      expect(failed.tasks[0]).toMatchObject({ file_name: 'blank.txt', message: expect.stringMatching(/No text could be extracted/) });
      expect((await tasks({ kind: 'IngestEmbedding' })).tasks.every((task) => task.kind === 'IngestEmbedding')).toBe(true);
      expect((await tasks({ kind: 'IngestFile', order: 'asc' })).tasks.map((task) => task.task_identifier)).toEqual([good, bad]);
      const since = all.tasks.find((task) => task.task_identifier === bad)!.created_at.replace('Z', '');
      expect((await tasks({ created_at_filter: { $gte: since } })).tasks.map((task) => task.task_identifier)).toEqual([bad]);

      const first = await tasks({ limit: 1 });
      expect(first.tasks).toHaveLength(1);
      const rest = await tasks({ limit: 1000, cursor: first.next_cursor });
      expect([...first.tasks, ...rest.tasks].map((task) => task.task_identifier)).toEqual(ids);
      expect(rest.next_cursor).toBeNull();
      for (const params of [{ limit: 0 }, { status: 'DONE' }, { kind: 'Other' }, { cursor: 'x' }, { created_at_filter: 'null,' }]) {
        expect((await call(t.app, 'GET', `/api/v1/tasks?${query(params)}`)).statusCode).toBe(422);
      }

      // A read key lists but cannot retry; a retry queues the kept file again as a new task.
      expect((await call(t.app, 'GET', '/api/v1/tasks', { key: KEYS.read })).json().data.tasks.map((task: ListedTask) => task.task_identifier)).not.toContain(bad);
      expect((await call(t.app, 'POST', `/api/v1/tasks/retry/${bad}`, { key: KEYS.write })).statusCode).toBe(404);
      expect((await call(t.app, 'POST', `/api/v1/tasks/retry/${good}`, { key: KEYS.other })).statusCode).toBe(400);
      const retried = await call(t.app, 'POST', `/api/v1/tasks/retry/${bad}`, { key: KEYS.other });
      expect(retried.statusCode, retried.body).toBe(201);
      const again = retried.json().data.task_identifier as string;
      expect(again).not.toBe(bad);
      expect(await waitForTask(t.app, again, 60_000, KEYS.other)).toMatchObject({ status: 'FAILED', title: 'Ingest blank.txt' });
      expect((await tasks({ status: 'FAILED' })).tasks.map((task) => task.task_identifier)).toEqual([again, bad]);
    });
  });
});
