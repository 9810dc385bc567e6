// Searches alone on a store run.ts kept (--keep): `npx tsx bench/scale/searches.ts --data-dir DIR
//   [--database-url URL] [--set clustered|isotropic] [--server worktree|head] [--rounds 3]
//   [--timed 100] [--seed 42] [--from N] [--profile DIR]`. See README.md.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, percentile, residentMb } from '../lib/serve.js';
import { buildTree, spawnServe, untilReady } from '../lib/tree.js';
import { Corpus } from '../search/corpus.js';
import { searchModes } from './modes.js';
import { serverEnv, startQueryEmbedder } from './query-embedder.js';
import { SET_KINDS, VectorSet, type SetKind } from './vectors.js';

const { values: args } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    'database-url': { type: 'string', default: '' },
    set: { type: 'string', default: 'clustered' },
    server: { type: 'string', default: 'worktree' },
    rounds: { type: 'string', default: '3' },
    timed: { type: 'string', default: '100' },
    seed: { type: 'string', default: '42' },
    profile: { type: 'string' }, // the server's CPU profiles (--cpu-prof) into this directory
    from: { type: 'string' }, // round r sends queries from N + (r - 1) x timed on, not run.ts's timed ones every round
  },
});
const [rounds, timed, seed, from] = [args.rounds, args.timed, args.seed, args.from ?? '-1'].map(Number);
if (!args['data-dir'] || !SET_KINDS.includes(args.set as SetKind) || !['worktree', 'head'].includes(args.server!) || ![rounds, timed].every((n) => Number.isInteger(n) && n >= 1) || !Number.isInteger(from)) {
  throw new Error('usage: searches.ts --data-dir DIR [--database-url URL] [--set clustered|isotropic] [--server worktree|head] [--rounds N] [--timed N] [--seed N] [--from N] [--profile DIR]');
}

// The set and seed the store was built with: the same queries as run.ts's timed ones.
const vectors = new VectorSet(args.set as SetKind, seed);
const modes = searchModes(new Corpus(seed));
const embedder = await startQueryEmbedder(() => vectors);
const tree = await buildTree('folio-bench-scale', args.server as 'worktree' | 'head');
if (tree.errors) console.error(`tsc reported errors (running what it emitted):\n${tree.errors.slice(0, 2000)}`);
const port = await freePort();
const env = serverEnv(args['data-dir'], args['database-url']!, embedder);
const child = spawnServe({ command: path.join(tree.root, 'bin/folio'), args: ['serve'] }, port, env, args.profile ?? null);
child.stdout!.resume();
child.stderr!.resume();

async function search(body: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(`http://127.0.0.1:${port}/api/v1/documents/search/pages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'bench' },
    body: `${body},"top_k":10}`,
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`HTTP ${response.status} ${text.slice(0, 300)}`);
  return performance.now() - started;
}

try {
  if (!(await untilReady(port, child))) throw new Error('the server did not become ready');
  const first = await search(modes[0].body(vectors, 99_999));
  console.log(`${tree.label}: first search ${(first / 1000).toFixed(1)} s after the start (the index's load from its snapshot)`);
  for (let round = 1; round <= rounds; round++) {
    const cells: string[] = [];
    for (const mode of modes) {
      for (let i = 0; i < 10; i++) await search(mode.body(vectors, 10_000 + i));
      const ms: number[] = [];
      // run.ts sends queries below 100,000 only (timed ones from 0, warm-ups and recall queries).
      const first = from >= 0 ? from + (round - 1) * timed : 0;
      for (let i = first; i < first + timed; i++) ms.push(await search(mode.body(vectors, i)));
      cells.push(`${mode.name} ${percentile(ms, 50).toFixed(1)} / ${percentile(ms, 99).toFixed(1)}`);
    }
    console.log(`round ${round}: ${cells.join(' | ')} | RSS ${residentMb(child.pid!, 'VmRSS').toFixed(0)} MB`);
  }
} finally {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  await embedder.close();
}
