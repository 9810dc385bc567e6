// Run before every test file (vitest.config.ts setupFiles): the worker threads that src/ starts
// (PGlite's engine thread, parsers, COPY) run src/ as test/global-setup.ts compiled it for the
// run, as the child processes do, instead of registering tsx's loader in each new thread
// (about 0.8 s of CPU per thread, and the suite starts one or more per store and app).
import path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { inject, vi } from 'vitest';

vi.mock('../src/worker-entry.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../src/worker-entry.ts')>();
  const { Worker } = await import('node:worker_threads');
  const sources = path.resolve(import.meta.dirname, '../src');
  const compiled = path.dirname(inject('folioMain'));
  const BOOTSTRAP = `import('node:worker_threads').then(({ workerData }) => import(workerData.entry));`;
  return {
    ...original,
    startWorker: (from: string, name: string, data: object, resourceLimits?: import('node:worker_threads').ResourceLimits) => {
      const dir = path.relative(sources, path.dirname(fileURLToPath(from)));
      const entry = pathToFileURL(path.join(compiled, dir, `${name}.js`)).href;
      return new Worker(BOOTSTRAP, { eval: true, workerData: { ...data, entry }, resourceLimits });
    },
  };
});
