// The IR test collections under shared/corpus/ir (format: shared/corpus/MANIFEST.md, sections
// B and B2) and the measures the benchmark reports on them.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface IrDoc {
  id: string;
  title: string;
  text: string;
}
export interface IrQuery {
  id: string;
  text: string;
}

export interface Collection {
  name: string;
  docs: IrDoc[];
  /** The queries that have judgments. */
  queries: IrQuery[];
  /** query id -> (doc id -> grade >= 1). */
  qrels: Map<string, Map<string, number>>;
}

export const NDCG_DEPTH = 10;
export const RECALL_DEPTH = 100;

const readJsonl = <T>(file: string): T[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);

/** The folder holding the collections: `dir`, $FOLIO_IR_DIR, or shared/corpus/ir in or beside the repository. */
export function collectionsDir(root: string, dir?: string): string {
  const candidates = [dir, process.env.FOLIO_IR_DIR, path.join(root, 'shared/corpus/ir'), path.join(root, '../shared/corpus/ir')].filter(
    (d): d is string => !!d,
  );
  const found = candidates.find((d) => existsSync(d));
  if (!found) throw new Error(`IR collections not found (tried ${candidates.join(', ')}); pass --corpus DIR`);
  return found;
}

/** Every collection in `dir` (a folder with corpus.jsonl, queries.jsonl and qrels.tsv), by name; `only` keeps some. */
export function readCollections(dir: string, only?: string[]): Collection[] {
  const names = readdirSync(dir)
    .filter((n) => existsSync(path.join(dir, n, 'corpus.jsonl')))
    .filter((n) => !only || only.includes(n))
    .sort();
  return names.map((name) => {
    const folder = path.join(dir, name);
    const qrels = new Map<string, Map<string, number>>();
    for (const line of readFileSync(path.join(folder, 'qrels.tsv'), 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const [qid, did, grade] = line.split('\t');
      if (Number(grade) < 1) continue;
      if (!qrels.has(qid)) qrels.set(qid, new Map());
      qrels.get(qid)!.set(did, Number(grade));
    }
    const queries = readJsonl<IrQuery>(path.join(folder, 'queries.jsonl')).filter((q) => (qrels.get(q.id)?.size ?? 0) > 0);
    return { name, docs: readJsonl<IrDoc>(path.join(folder, 'corpus.jsonl')), queries, qrels };
  });
}

/**
 * nDCG@10 with exponential gain 2^grade - 1 (the measure; binary grades make it plain
 * nDCG), ideal DCG from all of the query's judgments, including documents never ingested.
 */
export function ndcg(ranked: readonly string[], judgments: Map<string, number>, depth = NDCG_DEPTH): number {
  const gain = (g: number) => 2 ** g - 1;
  let dcg = 0;
  for (let i = 0; i < Math.min(depth, ranked.length); i++) dcg += gain(judgments.get(ranked[i]) ?? 0) / Math.log2(i + 2);
  const ideal = [...judgments.values()].sort((a, b) => b - a);
  let idcg = 0;
  for (let i = 0; i < Math.min(depth, ideal.length); i++) idcg += gain(ideal[i]) / Math.log2(i + 2);
  return idcg > 0 ? dcg / idcg : 0;
}

/** The share of the query's judged documents among the first 100 ranked. */
export function recall(ranked: readonly string[], judgments: Map<string, number>, depth = RECALL_DEPTH): number {
  let found = 0;
  for (const id of ranked.slice(0, depth)) if (judgments.has(id)) found++;
  return judgments.size > 0 ? found / judgments.size : 0;
}

export const mean = (xs: readonly number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);

export interface Quality {
  ndcg: number;
  recall: number;
}

/** Mean nDCG@10 and recall@100 over the collection's judged queries, for a ranking of doc ids per query id. */
export function quality(c: Collection, rankings: Map<string, readonly string[]>): Quality {
  const n = c.queries.map((q) => ndcg(rankings.get(q.id) ?? [], c.qrels.get(q.id)!));
  const r = c.queries.map((q) => recall(rankings.get(q.id) ?? [], c.qrels.get(q.id)!));
  return { ndcg: mean(n), recall: mean(r) };
}
