// The in-process page index: per workspace, one contiguous matrix of the compact codes of
// its unit page embeddings (store/vector-codes.ts), which a search scans, the embeddings themselves in a
// file (row-vectors.ts), read for the few pages the codes leave in doubt, and an inverted
// index of the pages' lexemes, loaded from the store on first use and brought up to date
// with the store's page changes before every search, so a search on any process sees every
// write acknowledged before it. Searches score their candidates here, from memory and the
// index's own files: the store serves only the change feed.
import os from 'node:os';
import type { Kysely } from 'kysely';
import { LruMap } from '../lru.js';
import type { LocalWrites, Store } from '../store/engine.js';
import type { Database } from '../store/schema.js';
import { indexedPages, loadIndexedPages, pageChangesSince, type IndexedPage, type PageReader } from '../store/pages.js';
import { encodeBitQuery, encodeQuery, type BitQuery, type QueryCode } from '../store/vector-codes.js';
import type { IndexSnapshots } from './index-snapshot.js';
import { ScanPool, topK, topKClamped } from './kernel/index.js';
import { RowScorers } from './kernel/row-scorer.js';
import type { KeywordHits, QueryTerm } from './keyword-index.js';
import { QueryTermReader } from './query-terms.js';
import { shortlistPositions } from './shortlist.js';
import { keywordScore, SEMANTIC_MAX, SEMANTIC_MIN, semanticScore } from './scores.js';
import { EMBEDDING_DIMENSIONS } from './vectors.js';
import { CODE_SPACE, WorkspacePages, type SlotPage } from './workspace-pages.js';

export interface PageQuery {
  /**
   * The query's unit vector, or null when it has none (every semantic score is then 0),
   * perhaps still being computed: the catch-up and the filter's documents do not wait for it.
   */
  vector: Promise<Float32Array | null>;
  /**
   * The query embedded by the superseded offline model (store/embedding-models.ts), asked for
   * only where the workspace still holds pages of it: those are scored with it, never with
   * `vector`. Without it, such pages have no semantic score.
   */
  supersededVector?: () => Promise<Float32Array | null>;
  /**
   * The query's lexemes with their weights (empty without query text), perhaps still being
   * read: a scan starts without them.
   */
  terms: Promise<readonly QueryTerm[]>;
  alpha: number;
  /** The document filter, or null when nothing is filtered. */
  filter: EligibleFilter | null;
  k: number;
  minRelevance: number;
  /** Scan every float vector instead of the codes first (the same results, bit for bit, more slowly). */
  exact?: boolean;
}

/** A document filter as the index sees it: what identifies it and how to read what it admits. */
export interface EligibleFilter {
  /** Equal for filters that admit the same documents. */
  key: string;
  /** The documents the filter admits, read from the store. */
  read(): Promise<ReadonlySet<number>>;
}

interface RankedScores {
  relevance: number;
  semantic: number;
  keyword: number;
}

export interface RankedPage extends SlotPage, RankedScores {}

/** Cosines of every row a workspace held when a search began, scanned while its catch-up read the store. */
interface EarlyScan {
  /** At `level`. */
  cosines: Float32Array;
  level: ScanLevel;
  /** The workspace's removal count then: a removal since may have moved rows. */
  removals: number;
}

/** What catchUp() answers when there is nothing to catch up with. */
const CAUGHT_UP: Promise<void> = Promise.resolve();

/** The query's vector as a scan takes it: with its code and bits, unless the search is exact or scans nothing. */
interface ScanVector {
  vector: Float32Array;
  code: QueryCode | null;
  /** Made at its first use: a search of fewer rows than the bits need never encodes it. */
  bits: (() => BitQuery) | null;
}

/**
 * What a search scans first: the bits (store/vector-codes.ts), then the int8 codes of the rows
 * they leave in doubt; the codes alone; or the float vectors (exact).
 */
type ScanLevel = 'bits' | 'codes' | 'exact';

/**
 * Scanned rows from which the bits come first. Where cosines crowd (isotropic vectors) the bits
 * keep a fifth to a third of the rows below this, whose codes then cost as much as a scan of all
 * codes (measured in process: 50k rows 190 ms against 155 at p50 on a busy machine, 100k equal);
 * on clustered vectors they pay from 20k rows (2-5x faster). So small workspaces search as before.
 */
export const BITS_MIN_ROWS = 100_000;

/** A level's bound on each row's error, and the widest of them. */
interface LevelBounds {
  /** The bounds of the rows `scanned[positions[i]]` (or `positions[i]` itself), i < count, into `out`. */
  fill(positions: Int32Array, count: number, scanned: Int32Array | null, out: Float64Array): void;
  widest: number;
}

/**
 * What may be among the best pages after a scan of the bits or codes: the rows whose bounds
 * reach the k-th best lower bound (increasing), and the keyword hits among them or without a row.
 */
interface Shortlist {
  rows: Int32Array;
  hits: KeywordHits;
  level: 'bits' | 'codes';
}

/** The best pages' scores and their slots, valid while the gate is held. */
interface RankedCandidates {
  results: RankedScores[];
  slots: number[];
}

export interface IndexMemory {
  workspaces: number;
  pages: number;
  /** Bytes of memory holding the page vectors' codes (and the vectors, where no file keeps them). */
  vectorBytes: number;
  /** Bytes of address space the codes' matrices have grown to (untouched pages take no RAM), and the vectors in memory. */
  reservedBytes: number;
  /** Postings (page, lexeme) of the keyword index. */
  postings: number;
  /** Bytes of the keyword index's postings and per-page arrays. */
  keywordBytes: number;
  /** Workspaces whose load is under way (by a preload or a first search). */
  loading: number;
}

/** The position of `row` in the sorted `rows`, or undefined. */
function positionIn(rows: Int32Array, row: number): number | undefined {
  let lo = 0;
  let hi = rows.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (rows[mid] < row) lo = mid + 1;
    else if (rows[mid] > row) hi = mid - 1;
    else return mid;
  }
  return undefined;
}

/** A search's query with its vector as the scans take it. */
type SearchQuery = Omit<PageQuery, 'vector'> & { vector: Promise<ScanVector | null> };

function scanVector(vector: Float32Array, coded: boolean): ScanVector {
  let bits: BitQuery | undefined;
  return { vector, code: coded ? encodeQuery(CODE_SPACE, vector) : null, bits: coded ? () => (bits ??= encodeBitQuery(CODE_SPACE, vector)) : null };
}

/** The level a scan of `rows` rows starts at, the bits from `bitsMinRows` rows. */
function levelOf({ code, bits }: ScanVector, rows: number, bitsMinRows: number): ScanLevel {
  if (bits && rows >= bitsMinRows) return 'bits';
  return code ? 'codes' : 'exact';
}

export interface PageIndexOptions {
  /** Scanned rows from which a search scans the bits first (default BITS_MIN_ROWS; tests lower it). */
  bitsMinRows?: number;
}

const NO_HITS: KeywordHits = { slots: new Int32Array(0), ranks: new Float64Array(0) };

const copyHits = ({ slots, ranks }: KeywordHits): KeywordHits => ({ slots: slots.slice(), ranks: ranks.slice() });

/** Pages from which a load is followed by a full garbage collection (see collectAfterLoad). */
const COLLECT_AFTER_PAGES = 5_000;

/**
 * A load's rows (about 15 KB of text per page) outlive the young generation and pile up in
 * the old one, which V8 keeps at its high-water mark for a while: a full collection right
 * after a large load gave 100k pages back ~55 MB (after queries, PGlite; ~0.1 s once per
 * load). Only where node runs with --expose-gc, as bin/folio starts it.
 */
function collectAfterLoad(pages: number): void {
  const { gc } = globalThis as { gc?: () => void };
  if (gc && pages >= COLLECT_AFTER_PAGES) gc();
}

/**
 * Pages a load or a catch-up indexes between two turns of the event loop. A load's batch of 500 pages held
 * this thread for 50-170 ms (its lexemes found, its postings appended, on a slow machine), which
 * requests for other workspaces and /health waited out; a start-up loads every workspace so.
 */
const LOAD_SLICE = 100;

/** Filters whose eligible documents are kept until the change feed shows a document or page change. */
const FILTERS_CACHED = 32;

interface EligibleDocuments {
  /** The workspace's change generation when they began to be read. */
  generation: number;
  documents: Promise<ReadonlySet<number>>;
}

export class PageIndex {
  private readonly workspaces = new Map<number, Promise<WorkspacePages>>();
  private readonly loaded = new Set<WorkspacePages>();
  /** The loaded workspaces by id (those a write's pages can be added to at once). */
  private readonly ready = new Map<number, WorkspacePages>();
  private readonly unwatch: () => void;
  /** Set by close(): a load under way stops at its next slice of pages, and preload() before its next workspace. */
  private closed = false;
  private readonly eligible = new LruMap<string, EligibleDocuments>(FILTERS_CACHED);
  /**
   * Scratch for rank(), which runs synchronously, so these serve every search: a keyword
   * query matching a tenth of 100k pages allocated megabytes per search (a young-generation
   * collection per search) when they were made afresh.
   */
  private candidateSlots = new Int32Array(0);
  private candidateRelevance = new Float64Array(0);
  private candidateSemantic = new Float64Array(0);
  private candidateKeyword = new Float64Array(0);
  /** By scanned position: 1 for a best-scoring row not yet found among the keyword hits, else 0. */
  private unmatched = new Uint8Array(0);
  /** By scanned position, for shortlist(): 1 where a keyword hit is. */
  private isHit = new Uint8Array(0);
  /** shortlist()'s keyword hits at scanned positions, kept for the next search (it runs synchronously). */
  private hitPositions = new Int32Array(0);
  private hitKeywords = new Float64Array(0);
  private hitOrder = new Int32Array(0);
  private readonly terms: QueryTermReader;
  private readonly scorers = new RowScorers(EMBEDDING_DIMENSIONS);
  private readonly bitsMinRows: number;

  private readonly db: Kysely<Database>;
  /** The embedded engine's write count: when it has not moved, no page changed and a catch-up is skipped. */
  private readonly localWrites: LocalWrites | null;
  /** The engine's own reader of a load's batches, where it has one. */
  private readonly readPages: PageReader;

  constructor(
    store: Pick<Store, 'db' | 'localWrites' | 'readPages' | 'watchWrittenPages'>,
    private readonly pool: ScanPool,
    /** Where the workspaces' content files go (see content-file.ts); null keeps none. */
    private readonly contentDir: string | null = os.tmpdir(),
    /**
     * Where workspaces' snapshots are written at close() and read by their next load
     * (index-snapshot.ts); null (the default) for none. Apart from `contentDir`, whose default
     * is shared by every process on the machine: only a directory of this store's own will do.
     */
    private readonly snapshots: IndexSnapshots | null = null,
    { bitsMinRows = BITS_MIN_ROWS }: PageIndexOptions = {},
  ) {
    this.bitsMinRows = bitsMinRows;
    this.db = store.db;
    this.localWrites = store.localWrites;
    this.readPages = store.readPages;
    this.terms = new QueryTermReader(store.db);
    this.unwatch =
      store.watchWrittenPages?.({
        wants: (workspaceId) => this.ready.has(workspaceId),
        written: (writes, workspaces, pages) => this.addWritten(writes, workspaces, pages),
      }) ?? (() => {});
  }

  /** The lexemes of a query text as the pages' configuration makes them, weighted qtf x idf. */
  queryTerms(text: string): Promise<QueryTerm[]> {
    return this.terms.read(text);
  }

  /**
   * Which of the words occur on some page of the workspace: every lexeme a word makes under
   * the pages' configuration on one page, as `plainto_tsquery` matches ("payments" finds
   * "payment"); a word that makes none (a stop word) counts as known.
   */
  async knownWords(workspaceId: number, words: readonly string[]): Promise<Set<string>> {
    if (words.length === 0) return new Set();
    const ws = await this.workspace(workspaceId);
    await this.catchUp(workspaceId, ws);
    const lexemes = await this.terms.lexemesOfWords(words);
    return ws.gate.read(async () => new Set(words.filter((w) => lexemes.get(w)!.length === 0 || ws.keyword.holdsAll(lexemes.get(w)!))));
  }

  /**
   * The `k` best pages by relevance = alpha x semantic + (1 - alpha) x keyword among the
   * embedded pages and the pages matching a query lexeme (under the document filter), with
   * relevance above `minRelevance`; ties go to the lower page id.
   */
  async search(workspaceId: number, query: PageQuery): Promise<RankedPage[]> {
    const ws = await this.workspace(workspaceId);
    // An exact search scans the vectors, and at alpha 0 nothing is scanned: neither needs the query's code.
    const coded = !query.exact && query.alpha > 0;
    const q = { ...query, vector: query.vector.then((vector) => (vector ? scanVector(vector, coded) : null)) };
    const caughtUp = this.catchUp(workspaceId, ws);
    // Where the catch-up is a statement (other processes may write), a search of a quiet
    // workspace runs meanwhile on what the index holds, and stands if the catch-up changed
    // nothing; else it runs again on the caught-up index.
    if (ws.quiet && this.localWrites === null) {
      const generation = ws.generation;
      // The driver sends the statement from a process.nextTick callback, which would wait for a
      // search computed in this chain of promises (a scan on this thread): let it go out first.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const early = this.searchCaughtUp(workspaceId, ws, q);
      early.catch(() => undefined);
      await caughtUp;
      if (ws.generation === generation) return early;
      return this.searchCaughtUp(workspaceId, ws, q);
    }
    // While pages are being added, the catch-up waits for the store, which is busy with the
    // writes: an unfiltered scan of the rows held meanwhile is kept, and once caught up only
    // the rows added since are scored (unless a removal moved rows in between).
    const early = caughtUp !== CAUGHT_UP && !q.filter && q.alpha > 0 ? this.scanEarly(ws, q) : null;
    early?.catch(() => undefined);
    await caughtUp;
    return this.searchCaughtUp(workspaceId, ws, q, early ? await early.catch(() => null) : null);
  }

  /** The cosines of every row the index holds now, copied, with the removal count they are valid for. */
  private async scanEarly(ws: WorkspacePages, q: SearchQuery): Promise<EarlyScan | null> {
    const vector = await q.vector;
    if (!vector) return null;
    return ws.gate.read(async () => {
      const removals = ws.removals;
      const level = levelOf(vector, ws.codes.rows, this.bitsMinRows);
      const cosines = await this.scanAll(ws, vector, level, undefined, (scores) => scores.slice());
      return { cosines, level, removals };
    });
  }

  /** Scores `rows` (or every row) at `level`: from the bits, the codes, or the floats for an exact search. */
  private scanAll<T>(ws: WorkspacePages, { vector, code, bits }: ScanVector, level: ScanLevel, rows: Int32Array | undefined, use: (scores: Float32Array) => T): Promise<T> {
    if (level === 'bits') {
      // A filter's rows spread over the blocks are scanned from their copy once it is made.
      const copy = rows && ws.compactBits(rows);
      return copy ? this.pool.scoreWith(copy, bits!().bytes, undefined, use) : this.pool.scoreWith(ws.bits, bits!().bytes, rows, use);
    }
    if (level === 'codes') return this.pool.scoreWith(ws.codes, code!.bytes, rows, use);
    return this.exactScores(ws, vector, rows ?? Int32Array.from({ length: ws.codes.rows }, (_, i) => i)).then(use);
  }

  /** An early scan's cosines with the rows added since scored too (at its level), or null when a removal has moved rows. */
  private async extendScan(ws: WorkspacePages, vector: ScanVector, early: EarlyScan): Promise<Float32Array | null> {
    if (early.removals !== ws.removals) return null;
    const held = early.cosines.length;
    const rows = ws.codes.rows;
    if (rows === held) return early.cosines;
    const added = Int32Array.from({ length: rows - held }, (_, i) => held + i);
    const { level } = early;
    const cosines = await (level === 'exact'
      ? this.exactScores(ws, vector.vector, added)
      : level === 'bits'
        ? this.pool.score(ws.bits, vector.bits!().bytes, added)
        : this.pool.score(ws.codes, vector.code!.bytes, added));
    const all = new Float32Array(rows);
    all.set(early.cosines);
    all.set(cosines, held);
    return all;
  }

  private async searchCaughtUp(workspaceId: number, ws: WorkspacePages, q: SearchQuery, early: EarlyScan | null = null): Promise<RankedPage[]> {
    const documents = q.filter ? await this.eligibleDocuments(workspaceId, ws, q.filter) : null;
    if (q.alpha === 0 && ws.supersededRows === 0) return this.searchByKeyword(ws, q, documents);
    const vector = await q.vector;
    return ws.gate.read(async () => {
      const { alpha } = q;
      const accepts = documents ? (slot: number) => documents.has(ws.slotDocument[slot]) : null;
      const hitsOf = (terms: readonly QueryTerm[]): KeywordHits =>
        alpha < 1 && terms.length > 0 ? ws.keyword.rank(terms, accepts) : NO_HITS;
      const rows = vector && alpha > 0 && documents ? ws.rowsOf(documents) : null;
      if (vector && alpha > 0 && ws.supersededRows > 0) {
        // Pages of two models: every row scored exactly with the query of its own model.
        const superseded = await this.supersededQuery(q);
        const cosines = await this.mixedScores(ws, vector.vector, superseded, rows ?? this.allRows(ws));
        const ranked = this.rank(ws, q, hitsOf(await q.terms), rows, cosines);
        await this.completeScores(ws, q, vector.vector, await q.terms, ranked);
        return this.resultsOf(ws, ranked);
      }
      const extended = vector && early && !rows ? await this.extendScan(ws, vector, early) : null;
      // From the bits or codes, the rows that may rank, narrowed by the codes after the bits
      // and scored again from their floats; from the floats, the ranking.
      const ranks = (hits: KeywordHits, scanned: Int32Array | null, cosines: Float32Array, level: ScanLevel): RankedCandidates | Shortlist =>
        level === 'exact' ? this.rank(ws, q, hits, scanned, cosines) : this.shortlist(ws, q, this.boundsOf(ws, vector!, level), hits, scanned, cosines, level);
      let ranked: RankedCandidates | Shortlist;
      if (extended) {
        ranked = ranks(hitsOf(await q.terms), null, extended, early!.level);
      } else if (vector && alpha > 0) {
        // The scan, and the reading of the query's lexemes and their keyword ranking on this
        // thread, overlap; the hits are copied (the keyword index reuses its buffers, and another
        // search may rank before the scan ends). At alpha 1 the ranking needs no lexemes; a hybrid
        // whose hits are not ranked yet ranks from a copy of the cosines (the pooled buffer is
        // valid only during the callback).
        const read: { hits: KeywordHits | null } = { hits: alpha === 1 ? NO_HITS : null };
        if (alpha < 1) q.terms.then((terms) => (read.hits = copyHits(hitsOf(terms)))).catch(() => undefined);
        const level = levelOf(vector, rows ? rows.length : ws.codes.rows, this.bitsMinRows);
        const scanned = await this.scanAll(ws, vector, level, rows ?? undefined, (cosines) =>
          read.hits ? ranks(read.hits, rows, cosines, level) : cosines.slice(),
        );
        ranked = scanned instanceof Float32Array ? ranks(hitsOf(await q.terms), rows, scanned, level) : scanned;
      } else {
        // Ranked by the keyword rank alone: only the hits of highest rank can be among the k best.
        const terms = await q.terms;
        ranked = this.rank(ws, q, alpha < 1 && terms.length > 0 ? ws.keyword.best(terms, q.k, accepts) : NO_HITS, rows, null);
      }
      if ('hits' in ranked && ranked.level === 'bits') {
        const { rows: doubtful, hits } = ranked;
        ranked = await this.pool.scoreWith(ws.codes, vector!.code!.bytes, doubtful, (approx) =>
          this.shortlist(ws, q, this.boundsOf(ws, vector!, 'codes'), hits, doubtful, approx, 'codes'),
        );
      }
      if ('hits' in ranked) {
        const exact = await this.exactScores(ws, vector!.vector, ranked.rows);
        ranked = this.rank(ws, q, ranked.hits, ranked.rows, exact);
      }
      await this.completeScores(ws, q, vector?.vector ?? null, await q.terms, ranked);
      return this.resultsOf(ws, ranked);
    });
  }

  /**
   * A search ranked by keyword rank alone (alpha 0), while the query is embedded: its vector
   * gives the results their semantic_score afterwards, from copies of their float vectors taken
   * under the gate (rows move once it is left), so that waiting for the embedder holds back
   * no change of the index.
   */
  private async searchByKeyword(ws: WorkspacePages, q: SearchQuery, documents: ReadonlySet<number> | null): Promise<RankedPage[]> {
    const terms = await q.terms;
    const { results, embedded, vectors } = await ws.gate.read(async () => {
      const accepts = documents ? (slot: number) => documents.has(ws.slotDocument[slot]) : null;
      const ranked = this.rank(ws, q, terms.length > 0 ? ws.keyword.best(terms, q.k, accepts) : NO_HITS, null, null);
      const embedded = ranked.slots.flatMap((slot, i) => (ws.slotRow[slot] >= 0 ? [i] : []));
      const [results, vectors] = await Promise.all([
        this.resultsOf(ws, ranked),
        ws.vectors.copy(Int32Array.from(embedded, (i) => ws.slotRow[ranked.slots[i]])),
      ]);
      return { results, embedded, vectors };
    });
    const vector = await q.vector;
    if (vector && embedded.length > 0) {
      const cosines = await this.scorers.use((scorer) => ws.vectors.scoreCopies(scorer, vector.vector, vectors));
      embedded.forEach((i, j) => (results[i].semantic = semanticScore(cosines[j])));
    }
    return results;
  }

  /** The query of the superseded model, or null (then its pages have no semantic score). */
  private async supersededQuery(q: Pick<PageQuery, 'supersededVector'>): Promise<Float32Array | null> {
    return q.supersededVector ? q.supersededVector() : null;
  }

  private allRows(ws: WorkspacePages): Int32Array {
    return Int32Array.from({ length: ws.codes.rows }, (_, i) => i);
  }

  /** The cosines of `rows`, each from the query of its page's model: the superseded rows' with `superseded` (0 without it). */
  private async mixedScores(ws: WorkspacePages, vector: Float32Array, superseded: Float32Array | null, rows: Int32Array): Promise<Float32Array> {
    const out = new Float32Array(rows.length);
    const current: number[] = [];
    const old: number[] = [];
    rows.forEach((row, i) => (ws.rowSuperseded[row] === 1 ? old : current).push(i));
    const parts: [number[], Float32Array | null][] = [[current, vector], [old, superseded]];
    for (const [at, query] of parts) {
      if (!query || at.length === 0) continue;
      const scores = await this.exactScores(ws, query, Int32Array.from(at, (i) => rows[i]));
      at.forEach((i, j) => (out[i] = scores[j]));
    }
    return out;
  }

  /** The float scan's cosines of `rows`, from the pages' vectors. */
  private exactScores(ws: WorkspacePages, vector: Float32Array, rows: Int32Array): Promise<Float32Array> {
    return this.scorers.use((scorer) => ws.vectors.score(scorer, vector, rows));
  }

  /** The ranked pages with their scores and contents, the contents read all at once (valid while the gate is held). */
  private resultsOf(ws: WorkspacePages, { results, slots }: RankedCandidates): Promise<RankedPage[]> {
    return Promise.all(results.map(async (r, i) => ({ ...(await ws.pageAt(slots[i])), ...r })));
  }

  /** Each row's bound at `level` (store/vector-codes.ts): proven for the codes, of BITS_CONFIDENCE for the bits. */
  private boundsOf(ws: WorkspacePages, { code, bits }: ScanVector, level: Shortlist['level']): LevelBounds {
    if (level === 'bits') {
      const query = bits!();
      const { maxNorm } = ws;
      const agreements = ws.rowAgreement;
      return {
        fill: (positions, count, scanned, out) => {
          for (let i = 0; i < count; i++) out[i] = query.bound(agreements[scanned ? scanned[positions[i]] : positions[i]], maxNorm);
        },
        widest: query.bound(ws.minAgreement, maxNorm),
      };
    }
    const { weight } = code!;
    const slack = code!.slack(ws.maxNorm);
    const errors = ws.rowError;
    return {
      fill: (positions, count, scanned, out) => {
        for (let i = 0; i < count; i++) out[i] = weight * errors[scanned ? scanned[positions[i]] : positions[i]] + slack;
      },
      widest: weight * ws.maxError + slack,
    };
  }

  /**
   * The rows that may be among the k best (shortlist.ts), from the bits' or codes' cosines of
   * the scanned rows (of `rows`, or the matrix's first ones) and each row's bound, and the
   * keyword hits among them or without a row, copied (the keyword index reuses its buffers).
   * Runs synchronously while `approx` is valid.
   */
  private shortlist(
    ws: WorkspacePages,
    q: Pick<PageQuery, 'alpha' | 'k' | 'minRelevance'>,
    { fill, widest }: LevelBounds,
    hits: KeywordHits,
    rows: Int32Array | null,
    approx: Float32Array,
    level: Shortlist['level'],
  ): Shortlist {
    const n = approx.length;
    if (this.isHit.length < n) this.isHit = new Uint8Array(Math.ceil(n * 1.25));
    const rowAt = (i: number): number => (rows ? rows[i] : i);
    const found = hits.slots.length;
    if (this.hitPositions.length < found) {
      const room = Math.ceil(found * 1.25);
      this.hitPositions = new Int32Array(room);
      this.hitKeywords = new Float64Array(room);
      this.hitOrder = new Int32Array(room);
    }
    const { hitPositions, hitKeywords, hitOrder } = this;
    // Hits without a row have their relevance exactly; those added after the scan began are left to the next search.
    const rowless: number[] = [];
    const rowlessHits: number[] = [];
    let positioned = 0;
    for (let h = 0; h < found; h++) {
      const row = ws.slotRow[hits.slots[h]];
      const keyword = (1 - q.alpha) * keywordScore(hits.ranks[h]);
      if (row < 0) {
        rowless.push(keyword);
        rowlessHits.push(h);
        continue;
      }
      const position = rows ? positionIn(rows, row) : row;
      if (position === undefined || position >= n) continue;
      hitPositions[positioned] = position;
      hitKeywords[positioned] = keyword;
      hitOrder[positioned++] = h;
    }
    const { positions, hitKept } = shortlistPositions(
      approx,
      (positions, count, out) => fill(positions, count, rows, out),
      widest,
      { positions: hitPositions.subarray(0, positioned), keywords: hitKeywords.subarray(0, positioned) },
      rowless,
      q,
      this.isHit,
    );
    // The hits of rows kept, and those without a row; rank() finds their rows among those kept.
    const kept = [...rowlessHits];
    for (let j = 0; j < positioned; j++) if (hitKept[j] === 1) kept.push(hitOrder[j]);
    // Loops rather than typed arrays' from() with a function: at a million isotropic rows tens of thousands are kept.
    const keptRows = new Int32Array(positions.length);
    for (let j = 0; j < positions.length; j++) keptRows[j] = rowAt(positions[j]);
    return {
      rows: keptRows,
      hits: { slots: Int32Array.from(kept, (h) => hits.slots[h]), ranks: Float64Array.from(kept, (h) => hits.ranks[h]) },
      level,
    };
  }

  /**
   * The best candidates. Runs synchronously while `cosines` (a pooled buffer, one per row of
   * `rows` or of the matrix) is valid, in candidate buffers kept for the next search.
   */
  private rank(
    ws: WorkspacePages,
    q: Pick<PageQuery, 'alpha' | 'k' | 'minRelevance'>,
    hits: KeywordHits,
    rows: Int32Array | null,
    cosines: Float32Array | null,
  ): RankedCandidates {
    const { alpha } = q;
    const found = hits.slots.length;
    const slotOf = (i: number) => ws.rowSlot[rows ? rows[i] : i];
    // Candidates: every keyword hit, and the k scanned rows of best semantic score. A scanned
    // row that is no hit has relevance alpha x semantic, and a hit's is never lower, so a row
    // that is neither is outranked by k candidates. Only those k rows' scores are computed.
    const best = cosines ? topKClamped(cosines, q.k, SEMANTIC_MIN, SEMANTIC_MAX, (i) => ws.slotPage[slotOf(i)]) : new Int32Array(0);
    const n = found + best.length;
    if (this.candidateSlots.length < n) {
      const room = Math.ceil(n * 1.25);
      this.candidateSlots = new Int32Array(room);
      this.candidateRelevance = new Float64Array(room);
      this.candidateSemantic = new Float64Array(room);
      this.candidateKeyword = new Float64Array(room);
    }
    if (cosines && this.unmatched.length < cosines.length) this.unmatched = new Uint8Array(Math.ceil(cosines.length * 1.25));
    const { candidateSlots: slots, candidateRelevance: relevance, candidateSemantic: semantic, candidateKeyword: keyword, unmatched } = this;
    for (const at of best) unmatched[at] = 1;
    let count = 0;
    for (let h = 0; h < found; h++) {
      const slot = hits.slots[h];
      const row = cosines ? ws.slotRow[slot] : -1;
      const at = row < 0 ? undefined : rows ? positionIn(rows, row) : row;
      // A page appended after the scan began (its row beyond the scanned ones, or missing from
      // the filter's rows computed before it) is left to the next search, whole.
      if (row >= 0 && (at === undefined || at >= cosines!.length)) continue;
      if (at !== undefined) unmatched[at] = 0;
      slots[count] = slot;
      semantic[count] = at === undefined ? 0 : semanticScore(cosines![at]);
      keyword[count] = keywordScore(hits.ranks[h]);
      relevance[count] = alpha * semantic[count] + (1 - alpha) * keyword[count];
      count++;
    }
    for (const at of best) {
      if (unmatched[at] === 0) continue; // a hit, already a candidate
      unmatched[at] = 0;
      slots[count] = slotOf(at);
      semantic[count] = semanticScore(cosines![at]);
      keyword[count] = 0;
      relevance[count] = alpha * semantic[count];
      count++;
    }
    const ranked = Array.from(topK(relevance.subarray(0, count), q.k, (j) => ws.slotPage[slots[j]])).filter((j) => relevance[j] > q.minRelevance);
    return {
      results: ranked.map((j) => ({ relevance: relevance[j], semantic: semantic[j], keyword: keyword[j] })),
      slots: ranked.map((j) => slots[j]),
    };
  }

  /** Fills in the score the ranking did not need: keyword at alpha 1, semantic at alpha 0. */
  private async completeScores(
    ws: WorkspacePages,
    q: Pick<PageQuery, 'alpha' | 'supersededVector'>,
    vector: Float32Array | null,
    terms: readonly QueryTerm[],
    { results, slots }: RankedCandidates,
  ): Promise<void> {
    const { alpha } = q;
    if (results.length === 0) return;
    if (alpha === 1 && terms.length > 0) {
      results.forEach((r, i) => (r.keyword = keywordScore(ws.keyword.rankOf(terms, slots[i]))));
    }
    if (alpha === 0 && vector !== null) {
      const embedded = slots.map((slot, i) => ({ row: ws.slotRow[slot], i })).filter(({ row }) => row >= 0);
      if (embedded.length === 0) return;
      const rows = Int32Array.from(embedded, (e) => e.row);
      const cosines =
        ws.supersededRows > 0 ? await this.mixedScores(ws, vector, await this.supersededQuery(q), rows) : await this.exactScores(ws, vector, rows);
      embedded.forEach(({ i }, j) => (results[i].semantic = semanticScore(cosines[j])));
    }
  }

  /**
   * The documents a filter admits: from the last read of the same filter when the change feed
   * has shown no document or page change since that read began (users repeat their filters: a
   * tenant, a category), else read afresh. The search has caught up first, so any write
   * acknowledged before it has moved the generation.
   */
  private eligibleDocuments(workspaceId: number, ws: WorkspacePages, filter: EligibleFilter): Promise<ReadonlySet<number>> {
    const key = `${workspaceId}:${filter.key}`;
    const cached = this.eligible.get(key);
    if (cached && cached.generation === ws.generation) return cached.documents;
    const entry = { generation: ws.generation, documents: filter.read() };
    entry.documents.catch(() => this.eligible.delete(key));
    this.eligible.set(key, entry);
    return entry.documents;
  }

  memory(): IndexMemory {
    const stats: IndexMemory = {
      workspaces: 0,
      pages: 0,
      vectorBytes: 0,
      reservedBytes: 0,
      postings: 0,
      keywordBytes: 0,
      loading: this.workspaces.size - this.loaded.size,
    };
    for (const ws of this.loaded) {
      stats.workspaces++;
      stats.pages += ws.slotOf.size;
      stats.vectorBytes += ws.codes.rows * (ws.codes.layout.stride + ws.bits.layout.stride + ws.rowError.BYTES_PER_ELEMENT) + ws.vectors.residentBytes;
      stats.reservedBytes += ws.codes.byteLength + ws.bits.byteLength + ws.vectors.residentBytes;
      stats.postings += ws.keyword.postings;
      stats.keywordBytes += ws.keyword.byteLength();
    }
    return stats;
  }

  /**
   * Loads the workspaces' indexes one after another, as their first searches would, so that
   * those searches find them in memory, and the query lexicon (the stemmer's check and the
   * prior). A search that arrives meanwhile waits for its own workspace's load, not the
   * others'; a failed load is left for the next search to retry.
   */
  async preload(workspaceIds: readonly number[]): Promise<void> {
    await this.terms.prepare();
    for (const workspaceId of workspaceIds) {
      if (this.closed) return;
      await this.workspace(workspaceId).catch(() => undefined);
    }
  }

  /**
   * Keeps the index of a workspace that this process wrote pages to current, in the background:
   * loads it if it is not held (at the first write, while it is small), else catches it up with
   * the writes, one catch-up at a time with at most one waiting (on the embedded engine a write's
   * pages are handed over as it commits, and nothing is read back). So the first search after a
   * bulk ingest finds the index ready, or nearly, where it would have loaded every page (at a
   * million pages, two to three minutes).
   */
  follow(workspaceId: number): void {
    if (this.closed) return;
    const held = this.workspaces.get(workspaceId);
    if (!held) return void this.workspace(workspaceId).catch(() => undefined);
    // After a load under way, which may have read the store before this write.
    held.then((ws) => (this.closed ? undefined : this.catchUp(workspaceId, ws))).catch(() => undefined);
  }

  private workspace(workspaceId: number): Promise<WorkspacePages> {
    let pending = this.workspaces.get(workspaceId);
    if (!pending) {
      pending = this.load(workspaceId);
      this.workspaces.set(workspaceId, pending);
      pending.catch(() => this.workspaces.delete(workspaceId));
    }
    return pending;
  }

  private async load(workspaceId: number): Promise<WorkspacePages> {
    const restored = await this.restore(workspaceId);
    if (restored) {
      this.loaded.add(restored);
      this.ready.set(workspaceId, restored);
      return restored;
    }
    const ws = new WorkspacePages(this.contentDir);
    try {
      ws.position = await loadIndexedPages(
        this.db,
        workspaceId,
        async (embedded, batch) => {
          ws.reserve(embedded);
          for (let i = 0; i < batch.length; i += LOAD_SLICE) {
            if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
            this.assertOpen();
            ws.addAll(batch.slice(i, i + LOAD_SLICE));
          }
        },
        this.readPages,
      );
      this.assertOpen();
    } catch (error) {
      ws.close();
      throw error;
    }
    ws.keyword.trim();
    this.loaded.add(ws);
    this.ready.set(workspaceId, ws);
    collectAfterLoad(ws.codes.rows);
    return ws;
  }

  /**
   * The workspace from its snapshot, caught up with the changes made since it was written (by
   * this store's other processes, or while none ran), or null where it has none usable.
   */
  private async restore(workspaceId: number): Promise<WorkspacePages | null> {
    if (!this.snapshots) return null;
    const ws = await this.snapshots.restore(this.db, workspaceId, this.contentDir);
    if (!ws) return null;
    try {
      this.assertOpen();
      await this.catchUp(workspaceId, ws);
      this.assertOpen();
    } catch (error) {
      ws.close();
      throw error;
    }
    return ws;
  }

  /**
   * Applies the page changes committed since the last catch-up. A search shares a catch-up
   * that has not yet read the store (it will see every write acknowledged before the search
   * arrived); one already reading may have missed such a write, so the search waits for the next.
   */
  private catchUp(workspaceId: number, ws: WorkspacePages): Promise<void> {
    if (ws.nextCatchUp) return ws.nextCatchUp;
    if (!ws.catchingUp && this.localWrites?.count === ws.seenWrites) return CAUGHT_UP;
    const run = ws.lastCatchUp.then(async () => {
      ws.nextCatchUp = null;
      ws.catchingUp = true;
      const writes = this.localWrites?.count ?? -1;
      const { snapshot, xmin, changes, documentsChanged } = await pageChangesSince(this.db, workspaceId, ws.position);
      // Before anything else: a filter read from now on sees these changes, one read before may not.
      ws.quiet = !documentsChanged && changes.length === 0;
      if (!ws.quiet) ws.generation++;
      const inserted = new Set<number>();
      const deleted = new Set<number>();
      for (const change of changes) {
        if (change.kind === 'insert') {
          // A held page inserted after its deletion was embedded again (store/reembedding.ts): read anew.
          if (!ws.slotOf.has(change.pageId) || deleted.has(change.pageId)) inserted.add(change.pageId);
        } else if (!inserted.delete(change.pageId) && ws.slotOf.has(change.pageId)) {
          // Only pages held: a deletion of one the index never held (deleted between a load's
          // position and its batch) would otherwise take the write gate for nothing, and wait
          // for every search in flight.
          deleted.add(change.pageId);
        }
      }
      const pages = inserted.size > 0 ? await indexedPages(this.readPages, [...inserted]) : [];
      if (deleted.size === 0 && ws.appendsInPlace(pages.length)) {
        // Appends move nothing a search in flight holds (its scan covers the rows it began
        // with, and rank() skips pages added after), so they need not wait for those searches:
        // under steady ingestion, waiting for them held every catch-up, and every search
        // arriving meanwhile, for a scan or two. In slices: the first search after a burst of
        // ingestion reads thousands of pages, which took the thread for a second in one go.
        for (let i = 0; i < pages.length; i += LOAD_SLICE) {
          if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
          this.assertOpen();
          ws.addAll(pages.slice(i, i + LOAD_SLICE));
        }
      } else if (deleted.size > 0 || pages.length > 0) {
        await ws.gate.write(() => {
          for (const pageId of deleted) ws.remove(pageId);
          ws.addAll(pages);
        });
      }
      ws.position = { snapshot, xmin };
      ws.seenWrites = writes;
    });
    ws.nextCatchUp = run;
    ws.lastCatchUp = run.catch(() => undefined).finally(() => (ws.catchingUp = false));
    return run;
  }

  /**
   * The embedded engine committed a write, its local write `writes`, to `workspaces`, with
   * their pages where the index wanted them. A workspace whose pages came is given them now, as
   * a catch-up would after reading them back. This runs before any statement that ran after the
   * write is answered, so a catch-up that reads the write finds its pages already held (and
   * applies a later deletion of them). A workspace that had seen every write before this one,
   * with no catch-up under way, has then seen this one too: its next search needs no catch-up.
   */
  private addWritten(writes: number, workspaces: readonly number[], pages: ReadonlyMap<number, IndexedPage[]> | null): void {
    const wrote = new Set(workspaces);
    for (const [workspaceId, ws] of this.ready) {
      if (wrote.has(workspaceId)) {
        const added = pages?.get(workspaceId);
        // Not given, or adding would compact the slots under a search in flight: the next catch-up reads them.
        if (!added || !ws.appendsInPlace(added.length)) continue;
        ws.addAll(added);
        ws.generation++;
      }
      if (ws.seenWrites === writes - 1 && !ws.catchingUp && !ws.nextCatchUp) ws.seenWrites = writes;
    }
  }

  /** Ends a load once close() has been called: nothing is read or kept after it. */
  private assertOpen(): void {
    if (this.closed) throw new Error('The page index was closed during a load');
  }

  async close(): Promise<void> {
    this.closed = true;
    this.unwatch();
    // A load under way stops at its next slice; wait for it, and for the catch-ups under way, so
    // that nothing reads the store after this.
    await Promise.allSettled(this.workspaces.values());
    await Promise.allSettled([...this.ready.values()].map((ws) => ws.lastCatchUp));
    if (this.snapshots) {
      for (const [workspaceId, ws] of this.ready) {
        // Only a workspace whose state matches its position: none with a catch-up under way.
        if (ws.catchingUp || ws.nextCatchUp) continue;
        this.snapshots.save(workspaceId, ws);
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    for (const ws of this.loaded) {
      this.pool.release(ws.codes);
      this.pool.release(ws.bits);
      ws.close();
    }
    // Their files closed: a workspace not saved above leaves the snapshot it was read from for the next start.
    this.snapshots?.close();
    this.loaded.clear();
    this.ready.clear();
    this.workspaces.clear();
  }
}
