// Task workers as separate processes on the PostgreSQL server: a worker killed with SIGKILL
// in the middle of a large PDF leaves a task that another worker completes exactly once,
// and two workers share 50 tasks, each done once.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../helpers/app.js';
import { multipartBody } from '../helpers/multipart.js';
import { ENGINES, POSTGRES_URL, openTestStore, type TestStore } from '../helpers/stores.js';
import { folioArgs } from '../helpers/process.js';
import { waitForTask } from '../helpers/tasks.js';
import { corpusFile } from '../helpers/corpus.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
// 117 pages: the worker is killed after 10, seconds before it would finish.
const GEOTOPO = corpusFile('pdf/text/GeoTopo-komprimiert.pdf');

describe.skipIf(!ENGINES.includes('postgres'))('worker processes on PostgreSQL', { timeout: 300_000 }, () => {
  let store: TestStore;
  let t: TestApp;
  const workers: ChildProcess[] = [];

  /** Starts `folio worker` and resolves once it is taking tasks. */
  async function startWorker(): Promise<ChildProcess> {
    const child = spawn(process.execPath, folioArgs(['worker']), {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${store.schema}`)}`,
        FOLIO_DATA_DIR: t.config.dataDir,
        FOLIO_TASK_LEASE_MS: '2000',
        FOLIO_WORKER_CONCURRENCY: '1',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    workers.push(child);
    await new Promise<void>((resolve, reject) => {
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('worker started')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`worker exited with ${code}: ${output}`)));
    });
    return child;
  }

  async function stopWorkers(): Promise<void> {
    for (const w of workers.splice(0)) {
      // A process killed by a signal has a signalCode and no exitCode, and has already exited.
      if (w.exitCode === null && w.signalCode === null) {
        w.kill('SIGKILL');
        await new Promise((r) => w.once('exit', r));
      }
    }
  }

  async function upload(filename: string, data: Buffer): Promise<string> {
    const body = multipartBody({}, { filename, data });
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/documents/ingest', headers: { ...body.headers, 'x-api-key': 'test-write-key' }, payload: body.payload });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data.task_identifier;
  }

  beforeAll(async () => {
    store = await openTestStore('postgres');
    // The API alone: tasks are left to the worker processes.
    t = await startTestApp('postgres', { store, role: 'api' });
  });
  afterAll(async () => {
    await stopWorkers();
    await t?.close();
    await store?.close();
  });

  it('completes a task once after its worker is killed in the middle of a large PDF', async () => {
    const task = await upload('GeoTopo-komprimiert.pdf', GEOTOPO);
    const first = await startWorker();
    for (;;) {
      const status = (await call(t.app, 'GET', `/api/v1/tasks/status/${task}`)).json().data;
      if (status.status === 'PROCESSING' && status.progress >= 10) break;
      expect(status.status, status.message).not.toMatch(/COMPLETED|FAILED/);
      await new Promise((r) => setTimeout(r, 50));
    }
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));

    await startWorker();
    const status = await waitForTask(t.app, task, 240_000);
    expect(status.status, status.message).toBe('COMPLETED');
    const docs = await store.db.selectFrom('documents').select('id').where('task_identifier', '=', task).execute();
    expect(docs).toHaveLength(1);
    const pages = await store.db.selectFrom('pages').select(['page_number']).where('document_id', '=', docs[0].id).orderBy('page_number').execute();
    expect(pages.map((p) => p.page_number)).toEqual(Array.from({ length: 117 }, (_, i) => i + 1));
    const attempts = await store.db.selectFrom('tasks').select('attempts').where('identifier', '=', task).executeTakeFirstOrThrow();
    expect(attempts.attempts).toBe(2);
    await stopWorkers();
  });

  it('shares 50 tasks between two workers, each task done exactly once', async () => {
    await Promise.all([startWorker(), startWorker()]);
    const tasks: string[] = [];
    for (let i = 0; i < 50; i++) {
      tasks.push(await upload(`note-${i}.txt`, Buffer.from(`Note number ${i}.\n\nIt mentions the word marker${i} once.`)));
    }
    for (const task of tasks) expect((await waitForTask(t.app, task, 120_000)).status).toBe('COMPLETED');
    const rows = await store.db
      .selectFrom('documents')
      .select(['task_identifier'])
      .where('task_identifier', 'in', tasks)
      .execute();
    expect(rows.map((r) => r.task_identifier).sort()).toEqual([...tasks].sort());
    const owners = await store.db.selectFrom('tasks').select('worker_id').distinct().where('identifier', 'in', tasks).execute();
    expect(owners.length).toBe(2);
    const search = await call(t.app, 'POST', '/api/v1/documents/search/pages', { body: { query: 'marker17', alpha: 0 } });
    expect(search.json().data.results).toHaveLength(1);
  });
});
