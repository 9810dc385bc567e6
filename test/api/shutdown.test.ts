// Shutdown of `folio serve` with a task in hand: SIGTERM hands the task back, and the next
// start completes it exactly once. (Apart from process.test.ts so the two run side by side.)
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { corpusFile } from '../helpers/corpus.js';
import { startServer } from '../helpers/process.js';
import { migratedDataDir } from '../helpers/stores.js';

const KEY = 'shutdown-test-key';

describe('shutdown with a task in hand', { timeout: 300_000 }, () => {
  // 117 pages: seconds of parsing, so the task is in hand when the stop comes.
  const GEOTOPO = corpusFile('pdf/text/GeoTopo-komprimiert.pdf');

  async function uploadAndWaitForProcessing(url: string): Promise<string> {
    const form = new FormData();
    form.append('file', new Blob([GEOTOPO], { type: 'application/pdf' }), 'GeoTopo-komprimiert.pdf');
    const res = await fetch(`${url}/api/v1/documents/ingest`, { method: 'POST', headers: { 'x-api-key': KEY }, body: form });
    expect(res.status).toBe(201);
    const task = ((await res.json()) as { data: { task_identifier: string } }).data.task_identifier;
    for (;;) {
      const status = await taskStatus(url, task);
      if (status.status === 'PROCESSING') return task;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async function taskStatus(url: string, task: string): Promise<{ status: string; message: string }> {
    const res = await fetch(`${url}/api/v1/tasks/status/${task}`, { headers: { 'x-api-key': KEY } });
    return ((await res.json()) as { data: { status: string; message: string } }).data;
  }

  it('hands unfinished tasks back on SIGTERM, and the next start completes them once', async () => {
    const dataDir = await migratedDataDir('folio-term-');
    const env = { FOLIO_DATA_DIR: dataDir, FOLIO_API_KEYS: `${KEY}:term:write`, FOLIO_SHUTDOWN_GRACE_MS: '0' };
    try {
      const first = await startServer(env);
      const task = await uploadAndWaitForProcessing(first.url);
      const code = await first.stop('SIGTERM');
      expect(code, `the server's output: ${first.output().slice(-4000)}`).toBe(0);

      const second = await startServer(env);
      try {
        // Released, not failed: the task is queued again at once and completes.
        let status = await taskStatus(second.url, task);
        expect(['PENDING', 'PROCESSING', 'COMPLETED']).toContain(status.status);
        const deadline = Date.now() + 120_000;
        while (status.status !== 'COMPLETED' && Date.now() < deadline) {
          expect(status.status).not.toBe('FAILED');
          await new Promise((r) => setTimeout(r, 100));
          status = await taskStatus(second.url, task);
        }
        expect(status.status).toBe('COMPLETED');
        const doc = await fetch(`${second.url}/api/v1/documents/task/${task}`, { headers: { 'x-api-key': KEY } });
        const body = (await doc.json()) as { data: { pages: unknown[] } };
        expect(body.data.pages).toHaveLength(117);
      } finally {
        await second.stop();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
