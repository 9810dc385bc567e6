// Starts a worker thread on a module beside the caller's: `.ts` under tsx (the sources run
// directly) or `.js` in the build, with the loader TypeScript needs.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type ResourceLimits } from 'node:worker_threads';

// Evaluated as the worker's script: the same text serves dist/ (plain import) and TypeScript
// sources (tsx's ESM loader registered first). It must parse as CommonJS and as ESM.
const BOOTSTRAP = `
import('node:worker_threads').then(async ({ workerData }) => {
  if (workerData.loader) (await import(workerData.loader)).register();
  await import(workerData.entry);
});
`;

/** The module `name` beside `from` (an `import.meta.url`), and under TypeScript the tsx loader it needs. */
function workerEntry(from: string, name: string): { entry: string; loader: string | null } {
  const typescript = /\.[cm]?ts$/.test(new URL(from).pathname);
  const entry = new URL(`./${name}${typescript ? '.ts' : '.js'}`, from).href;
  let loader: string | null = null;
  if (typescript) {
    // tsx registers its loader only on the main thread: the worker registers it through the API.
    const api = createRequire(from).resolve('tsx/esm/api');
    const esm = api.replace(/\.cjs$/, '.mjs');
    loader = pathToFileURL(existsSync(esm) ? esm : api).href;
  }
  return { entry, loader };
}

/** A worker running module `name` beside `from`; it reads `data` from its `workerData`. */
export function startWorker(from: string, name: string, data: object, resourceLimits?: ResourceLimits): Worker {
  return new Worker(BOOTSTRAP, { eval: true, workerData: { ...data, ...workerEntry(from, name) }, resourceLimits });
}
