// Leave-one-out tuning of the ranking constants on the IR collections, scored offline: the
// documents' and queries' lexemes are read once from an in-memory PGlite (as the service's
// pages hold them; cached in $TMPDIR), and every candidate is scored in process, without
// ingesting anything. For each collection held out, the constants are chosen on the other
// two and the held-out collection's figures reported.
// `npx tsx bench/ir-eval/tune.ts [--part missing|embedder|joint|scale|transform|all] [--corpus DIR] [--verbose]`. See README.md.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { hashEmbed } from '../../src/providers/embeddings/hashing.js';
import { LEXEME_HASHING, lexemeEmbedder, type LexemeHashingParams } from '../../src/providers/embeddings/lexeme-hashing.js';
import { RANK } from '../../src/search/keyword-index.js';
import { parseTsvector } from '../../src/search/tsvector.js';
import { migrateToLatest, openStore } from '../../src/store/engine.js';
import { missingWordCount } from '../../src/text/word-weight.js';
import { collectionsDir, mean, ndcg, readCollections, RECALL_DEPTH, type Collection } from './collections.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const { values: args } = parseArgs({
  options: { part: { type: 'string', default: 'all' }, corpus: { type: 'string' }, verbose: { type: 'boolean', default: false } },
});
const collections = readCollections(collectionsDir(ROOT, args.corpus));

// ---------------------------------------------------------------------------------------------
// Lexemes as the store makes them (to_tsvector 'english'), and the prior.

interface Terms {
  lexeme: string[];
  tf: number[];
}
interface Lexed {
  docs: Terms[];
  queries: Terms[];
}
interface Cache {
  prior: Record<string, number>;
  lexed: Record<string, Lexed>;
}

async function readLexemes(): Promise<Cache> {
  const file = path.join(tmpdir(), `folio-ir-tune-${collections.map((c) => c.name).join('-')}.json`);
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as Cache;
  const store = await openStore({ databaseUrl: null, dataDir: null });
  try {
    await migrateToLatest(store.db);
    const terms = async (texts: string[]): Promise<Terms[]> => {
      const rows = (
        await sql<{ tsv: string }>`SELECT to_tsvector('english', t)::text AS tsv FROM unnest(${texts}::text[]) WITH ORDINALITY AS u(t, n) ORDER BY n`.execute(
          store.db,
        )
      ).rows;
      return rows.map((r) => {
        const parsed = parseTsvector(r.tsv);
        return { lexeme: parsed.map((p) => p.lexeme), tf: parsed.map((p) => p.tf) };
      });
    };
    const lexed: Record<string, Lexed> = {};
    for (const c of collections) lexed[c.name] = { docs: await terms(c.docs.map((d) => d.text)), queries: await terms(c.queries.map((q) => q.text)) };
    const prior = Object.fromEntries(
      (await sql<{ lexeme: string; frequency: string }>`SELECT lexeme, frequency::text AS frequency FROM word_prior`.execute(store.db)).rows.map((r) => [
        r.lexeme,
        Number(r.frequency),
      ]),
    );
    const cache = { prior, lexed };
    writeFileSync(file, JSON.stringify(cache));
    return cache;
  } finally {
    await store.close();
  }
}

const cache = await readLexemes();
const prior = new Map(Object.entries(cache.prior));

// ---------------------------------------------------------------------------------------------
// Scoring.

/** The count assumed for a lexeme the prior lacks. */
type Missing = (lexeme: string) => number;

/** The idf of a lexeme as keyword-index.ts makes it. */
const rankIdf = (l: string, missing: Missing) => Math.log(1 + RANK.PRIOR_MASS / (prior.get(l) ?? missing(l)));

/** The raw BM25-shaped sum of every document for every query (0 where nothing matched). */
function rawRanks(c: Collection, missing: Missing): Float64Array[] {
  const { docs, queries } = cache.lexed[c.name];
  const postings = new Map<string, { doc: number; tf: number }[]>();
  docs.forEach((d, i) => d.lexeme.forEach((l, j) => (postings.get(l) ?? postings.set(l, []).get(l)!).push({ doc: i, tf: d.tf[j] })));
  const norm = docs.map((d) => RANK.K1 * (1 - RANK.B + (RANK.B * d.lexeme.length) / RANK.L));
  return queries.map((q) => {
    const r = new Float64Array(docs.length);
    q.lexeme.forEach((l, j) => {
      const w = q.tf[j] * rankIdf(l, missing);
      for (const p of postings.get(l) ?? []) r[p.doc] += (w * p.tf * (RANK.K1 + 1)) / (p.tf + norm[p.doc]);
    });
    return r;
  });
}

/** The query's own weight, the sum of its lexemes' qtf x idf (keyword-index.ts's queryWeight). */
function queryWeights(c: Collection, missing: Missing): number[] {
  return cache.lexed[c.name].queries.map((q) => q.lexeme.reduce((sum, l, j) => sum + q.tf[j] * rankIdf(l, missing), 0));
}

/** The keyword rank r as keyword-index.ts computes it: (SCALE x the raw sum / the query's weight)^POWER. */
function keywordRanks(c: Collection, missing: Missing): Float64Array[] {
  const weights = queryWeights(c, missing);
  return rawRanks(c, missing).map((r, n) => r.map((x) => (x > 0 ? (RANK.SCALE * (x / weights[n])) ** RANK.POWER : 0)));
}

/** BM25 (k1 0.9, b 0.4) with the collection's own statistics, as run.ts's reference. */
function bm25Ranks(c: Collection): Float64Array[] {
  const { docs, queries } = cache.lexed[c.name];
  const len = docs.map((d) => d.tf.reduce((a, b) => a + b, 0));
  const avg = mean(len.filter((x) => x > 0));
  const postings = new Map<string, { doc: number; tf: number }[]>();
  docs.forEach((d, i) => d.lexeme.forEach((l, j) => (postings.get(l) ?? postings.set(l, []).get(l)!).push({ doc: i, tf: d.tf[j] })));
  const n = docs.filter((d) => d.lexeme.length > 0).length;
  return queries.map((q) => {
    const r = new Float64Array(docs.length);
    for (const l of new Set(q.lexeme)) {
      const list = postings.get(l) ?? [];
      const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
      for (const p of list) r[p.doc] += (idf * p.tf * 1.9) / (p.tf + 0.9 * (0.6 + (0.4 * len[p.doc]) / avg));
    }
    return r;
  });
}

/** Cosines of every query with every document under an embedding function (negative as 0). */
function semanticScores(c: Collection, embed: (text: string) => Float32Array): Float32Array[] {
  const dims = 1536;
  const nonEmpty = c.docs.map((d) => d.text.trim() !== '');
  const matrix = new Float32Array(c.docs.length * dims);
  c.docs.forEach((d, i) => nonEmpty[i] && matrix.set(embed(d.text), i * dims));
  return c.queries.map((q) => {
    const v = embed(q.text);
    const nz: number[] = [];
    for (let k = 0; k < dims; k++) if (v[k] !== 0) nz.push(k);
    const out = new Float32Array(c.docs.length);
    for (let i = 0; i < c.docs.length; i++) {
      let dot = 0;
      const base = i * dims;
      for (const k of nz) dot += v[k] * matrix[base + k];
      out[i] = Math.max(0, Math.min(1, dot));
    }
    return out;
  });
}

/** Mean nDCG@10 of the ranking by alpha x semantic + (1 - alpha) x r/(r+1); at alpha 0 only matching documents rank. */
function score(c: Collection, ranks: Float64Array[] | null, semantic: Float32Array[] | null, alpha: number): number {
  return mean(
    c.queries.map((q, n) => {
      const rel: { i: number; s: number }[] = [];
      for (let i = 0; i < c.docs.length; i++) {
        const r = ranks ? ranks[n][i] : 0;
        if (alpha === 0 && r <= 0) continue;
        const s = (semantic ? alpha * semantic[n][i] : 0) + (1 - alpha) * (r > 0 ? r / (r + 1) : 0);
        rel.push({ i, s });
      }
      rel.sort((a, b) => b.s - a.s || a.i - b.i);
      return ndcg(
        rel.slice(0, RECALL_DEPTH).map((x) => c.docs[x.i].id),
        c.qrels.get(q.id)!,
      );
    }),
  );
}

const bm25 = new Map(collections.map((c) => [c.name, score(c, bm25Ranks(c), null, 0)]));
const f3 = (x: number) => x.toFixed(3);

/**
 * Leave-one-out: for each held-out collection, the candidate with the best `objective` over the
 * other two (each a figure per collection, combined by their mean or another `combine`), and
 * its figures on the held-out one.
 */
function leaveOneOut<T>(
  label: string,
  candidates: T[],
  describe: (t: T) => string,
  figures: (t: T) => Map<string, number[]>,
  objective: (fig: number[], c: string) => number,
  combine: (xs: number[]) => number = mean,
): void {
  const all = candidates.map((t) => ({ t, fig: figures(t) }));
  console.log(`\n## ${label}: ${candidates.length} candidates`);
  if (args.verbose) for (const { t, fig } of all) console.log(`  ${describe(t)}: ${collections.map((c) => `${c.name} ${fig.get(c.name)!.map(f3).join('/')}`).join('; ')}`);
  for (const held of collections) {
    const train = collections.filter((c) => c !== held);
    const best = all.reduce((a, b) => (combine(train.map((c) => objective(b.fig.get(c.name)!, c.name))) > combine(train.map((c) => objective(a.fig.get(c.name)!, c.name))) ? b : a));
    const shown = collections.map((c) => `${c.name} ${best.fig.get(c.name)!.map(f3).join('/')}`).join('; ');
    console.log(`held out ${held.name}: chose ${describe(best.t)} on the others -> ${held.name} ${best.fig.get(held.name)!.map(f3).join('/')} (all: ${shown})`);
  }
  const overall = all.reduce((a, b) => (combine(collections.map((c) => objective(b.fig.get(c.name)!, c.name))) > combine(collections.map((c) => objective(a.fig.get(c.name)!, c.name))) ? b : a));
  console.log(`on all three: ${describe(overall.t)} -> ${collections.map((c) => `${c.name} ${overall.fig.get(c.name)!.map(f3).join('/')}`).join('; ')}`);
}

console.log(`BM25 nDCG@10: ${collections.map((c) => `${c.name} ${f3(bm25.get(c.name)!)}`).join(', ')}`);

// ---------------------------------------------------------------------------------------------

if (args.part === 'missing' || args.part === 'all') {
  // The count assumed for a lexeme the prior lacks: one constant (today's idf 14 is a count of
  // about 1.66), or exp(logCount - perChar x length), and another for tokens with digits.
  interface M {
    logCount: number;
    perChar: number;
    digits: number;
  }
  const candidates: M[] = [];
  for (const logCount of [-1, 0, 1, 2, 3, 4, 5]) for (const perChar of [0, 0.1, 0.2, 0.3]) for (const digits of [1, 10, 100, 1000]) {
    candidates.push({ logCount, perChar, digits });
  }
  const fn = (m: M): Missing => (l) => (/[0-9]/.test(l) ? m.digits : Math.exp(m.logCount - m.perChar * l.length));
  const missingCount = collections.map((c) => {
    const qs = cache.lexed[c.name].queries.flatMap((q) => q.lexeme);
    return `${c.name} ${qs.filter((l) => !prior.has(l)).length} of ${qs.length}`;
  });
  console.log(`\nquery lexemes the prior lacks: ${missingCount.join(', ')}`);
  const constant: Missing = () => RANK.PRIOR_MASS / Math.expm1(14);
  console.log(`before (idf 14): ${collections.map((c) => `${c.name} ${f3(score(c, keywordRanks(c, constant), null, 0))}`).join(', ')}`);
  leaveOneOut(
    'keyword idf of lexemes the prior lacks (alpha 0 nDCG@10 / BM25)',
    candidates,
    (m) => `count e^(${m.logCount} - ${m.perChar} x length), digits ${m.digits}`,
    (m) => new Map(collections.map((c) => [c.name, [score(c, keywordRanks(c, fn(m)), null, 0)]])),
    ([k], c) => k / bm25.get(c)!,
  );
}

if (args.part === 'embedder' || args.part === 'all') {
  const v1 = collections.map((c) => `${c.name} ${f3(score(c, null, semanticScores(c, hashEmbed), 1))}`);
  console.log(`\nv1 semantic nDCG@10: ${v1.join(', ')}`);
  const candidates: LexemeHashingParams[] = [];
  // The count assumed for a lexeme the prior lacks is the keyword rank's (word-weight.ts) times missingScale.
  const scaled = new Map<(l: string) => number, number>();
  for (const priorMass of [2e7, 2e8]) for (const idfPower of [0.75, 1]) for (const ngramShare of [0.25, 0.4, 0.55]) for (const missingScale of [1, 10, 100]) {
    const missingCount = (l: string) => missingScale * missingWordCount(l);
    scaled.set(missingCount, missingScale);
    candidates.push({ ...LEXEME_HASHING, priorMass, idfPower, ngramShare, bigramShare: 0.1, missingCount });
  }
  leaveOneOut(
    'offline embedder v2 (alpha 1 nDCG@10 / BM25)',
    candidates,
    (p) => `mass ${p.priorMass}, idf^${p.idfPower}, n-grams ${p.ngramShare}, bigrams ${p.bigramShare}, missing count x${scaled.get(p.missingCount) ?? 1}`,
    (p) => {
      const embed = lexemeEmbedder(p);
      return new Map(collections.map((c) => [c.name, [score(c, null, semanticScores(c, embed), 1)]]));
    },
    ([s], c) => s / bm25.get(c)!,
  );
}

if (args.part === 'joint' || args.part === 'all') {
  // The embedder's families chosen for all three aims at once: semantic >= 0.9 x BM25 and the
  // hybrid at 0.5 >= the better part - 0.005; the objective is the smaller of the two slacks.
  const candidates: LexemeHashingParams[] = [];
  for (const ngramShare of [0, 0.1, 0.25, 0.4]) for (const bigramShare of [0, 0.1]) candidates.push({ ...LEXEME_HASHING, ngramShare, bigramShare });
  leaveOneOut(
    'embedder families for all aims (nDCG@10 keyword/hybrid 0.5/semantic; objective: the worst slack of the aims on the training collections)',
    candidates,
    (p) => `n-grams ${p.ngramShare}, bigrams ${p.bigramShare}`,
    (p) => {
      const embed = lexemeEmbedder(p);
      return new Map(
        collections.map((c) => {
          const ranks = keywordRanks(c, missingWordCount);
          const sem = semanticScores(c, embed);
          return [c.name, [score(c, ranks, sem, 0), score(c, ranks, sem, 0.5), score(c, ranks, sem, 1)]];
        }),
      );
    },
    ([k, h, sem], c) => Math.min(h - Math.max(k, sem) + 0.005, sem / bm25.get(c)! - 0.9),
    (xs) => Math.min(...xs),
  );
}

if (args.part === 'scale' || args.part === 'all') {
  // The keyword rank against the v2 embedder's cosines, r = (scale x raw)^power (power 1 today):
  // the hybrid at 0.5 against the better of its parts. Keyword ranking is the same for all.
  const embed = lexemeEmbedder();
  const semantic = new Map(collections.map((c) => [c.name, semanticScores(c, embed)]));
  const raw = new Map(collections.map((c) => [c.name, rawRanks(c, missingWordCount)]));
  const candidates: { scale: number; power: number }[] = [];
  for (const scale of [0.01, 0.02, 0.03, 0.05, 0.08]) for (const power of [0.5, 0.75, 1, 1.5, 2]) candidates.push({ scale, power });
  leaveOneOut(
    'keyword rank r = (scale x raw)^power (nDCG@10 keyword/hybrid 0.5/semantic; objective hybrid - max(parts))',
    candidates,
    ({ scale, power }) => `scale ${scale}, power ${power}`,
    ({ scale, power }) =>
      new Map(
        collections.map((c) => {
          const ranks = raw.get(c.name)!.map((q) => q.map((x) => (scale * x) ** power));
          const sem = semantic.get(c.name)!;
          return [c.name, [score(c, ranks, sem, 0), score(c, ranks, sem, 0.5), score(c, ranks, sem, 1)]];
        }),
      ),
    ([k, h, s]) => h - Math.max(k, s),
  );
}

if (args.part === 'transform' || args.part === 'all') {
  // The form of keyword_score against the v2 embedder's cosines. Every candidate is monotone
  // in the raw rank within a query, so the keyword ranking is unchanged; only the hybrid
  // moves. x = the raw rank (SCALE 1) divided by the query's own weight W^gamma (W the sum of
  // its terms' qtf x idf, "l1", or their L2 norm, "l2": statistics of the query, never of the
  // corpus; under l1^1, x < K1 + 1 whatever the page), then y = (scale x x)^power and
  // keyword_score y/(y+1) ("ratio", the spec's r/(r+1) with r = y) or 1 - e^-y ("exp", r = e^y - 1).
  const embed = lexemeEmbedder();
  const semantic = new Map(collections.map((c) => [c.name, semanticScores(c, embed)]));
  const raw = new Map(collections.map((c) => [c.name, rawRanks(c, missingWordCount)]));
  const idf = (l: string) => rankIdf(l, missingWordCount);
  type Norm = 'none' | 'l1' | 'l2';
  const weightOf = (norm: Norm, q: Terms): number => {
    if (norm === 'none') return 1;
    const w = q.lexeme.map((l, j) => q.tf[j] * idf(l));
    return norm === 'l1' ? w.reduce((a, b) => a + b, 0) : Math.hypot(...w);
  };
  const normalised = (norm: Norm, gamma: number) =>
    new Map(
      collections.map((c) => [
        c.name,
        raw.get(c.name)!.map((r, n) => {
          const w = weightOf(norm, cache.lexed[c.name].queries[n]) ** gamma;
          return w > 0 ? r.map((x) => x / w) : r;
        }),
      ]),
    );
  interface T {
    norm: Norm;
    gamma: number;
    form: 'ratio' | 'exp';
    scale: number;
    power: number;
  }
  const POWERS = [0.5, 1, 1.5, 2];
  const grids: [Norm, number, number[]][] = [
    ['none', 0, [0.005, 0.01, 0.02, 0.03, 0.05, 0.08]],
    ['l1', 1, [0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5]],
    ['l1', 0.5, [0.02, 0.04, 0.07, 0.1, 0.15, 0.2, 0.3]],
    ['l2', 1, [0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5]],
  ];
  const xs = new Map(grids.map(([norm, gamma]) => [`${norm}^${gamma}`, normalised(norm, gamma)]));
  for (const [key, m] of xs) {
    const med = collections.map((c) => {
      const tops = m.get(c.name)!.map((r) => r.reduce((a, b) => Math.max(a, b), 0)).sort((a, b) => a - b);
      return `${c.name} ${tops[tops.length >> 1].toFixed(3)}`;
    });
    console.log(`median best x (${key}): ${med.join(', ')}`);
  }
  const figures = (t: T) =>
    new Map(
      collections.map((c) => {
        const ranks = xs.get(`${t.norm}^${t.gamma}`)!.get(c.name)!.map((q) =>
          q.map((x) => {
            const y = (t.scale * x) ** t.power;
            return t.form === 'ratio' ? y : Math.expm1(Math.min(y, 700));
          }),
        );
        const sem = semantic.get(c.name)!;
        return [c.name, [score(c, ranks, sem, 0), score(c, ranks, sem, 0.5), score(c, ranks, sem, 1)]];
      }),
    );
  const memo = new Map<string, Map<string, number[]>>();
  const describe = (t: T) => `${t.form} of (${t.scale} x raw / W_${t.norm}^${t.gamma})^${t.power}`;
  const cached = (t: T) => memo.get(describe(t)) ?? memo.set(describe(t), figures(t)).get(describe(t))!;
  // A candidate whose scores reach 1 in floating point (exp of an unbounded x) ties pages and
  // changes the keyword ranking itself: it is dropped.
  const keywordNow = cached({ norm: 'none', gamma: 0, form: 'ratio', scale: 0.02, power: 1 });
  const valid = (t: T) => collections.every((c) => Math.abs(cached(t).get(c.name)![0] - keywordNow.get(c.name)![0]) < 1e-9);
  const objective = ([k, h, s]: number[]) => h - Math.max(k, s);
  const worst = (v: number[]) => Math.min(...v);

  // 1. Every family at once.
  const all: T[] = [];
  for (const [norm, gamma, scales] of grids) for (const form of ['ratio', 'exp'] as const) for (const scale of scales) for (const power of POWERS) {
    all.push({ norm, gamma, form, scale, power });
  }
  const kept = all.filter(valid);
  console.log(`\n${all.length - kept.length} of ${all.length} candidates dropped (keyword scores reaching 1: ${all.filter((t) => !valid(t)).map(describe).join('; ')})`);
  leaveOneOut('keyword_score transform, every family (nDCG@10 keyword/hybrid 0.5/semantic; objective: mean of hybrid - max(parts))', kept, describe, cached, objective);
  leaveOneOut('keyword_score transform, every family (objective: the worst of hybrid - max(parts))', kept, describe, cached, objective, worst);

  // 2. The spec's form r/(r+1), r = (scale x raw / W_l1)^power: the rank as a share of the query's weight.
  const l1: T[] = [];
  for (const scale of [0.5, 0.75, 1, 1.25, 1.5, 2, 3]) for (const power of [1, 1.25, 1.5, 1.75, 2, 2.5, 3, 4, 6]) l1.push({ norm: 'l1', gamma: 1, form: 'ratio', scale, power });
  leaveOneOut('r = (scale x raw / W_l1)^power, r/(r+1) (objective: mean of hybrid - max(parts))', l1, describe, cached, objective);
  leaveOneOut('r = (scale x raw / W_l1)^power, r/(r+1) (objective: the worst of hybrid - max(parts))', l1, describe, cached, objective, worst);
  const power1 = l1.filter((t) => t.power === 1);
  leaveOneOut('r = scale x raw / W_l1, r/(r+1) (objective: the worst of hybrid - max(parts))', power1, describe, cached, objective, worst);
}
