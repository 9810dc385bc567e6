// The page index's snapshots on both engines: a load from one answers as a full load does, bit
// for bit (through its bits, codes and vectors), without reading the pages from the store, and sees what changed while no index
// ran (inserts, deletions, re-embeddings, metadata); a snapshot serves one process at a time, and
// again after that process dies without writing the next one; never for another store or a store
// behind its position, and a truncated or corrupt one leaves a full load.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { hashEmbed } from '../../src/providers/embeddings/hashing.js';
import { IndexSnapshots } from '../../src/search/index-snapshot.js';
import { ScanPool } from '../../src/search/kernel/index.js';
import { PageIndex, type PageQuery, type RankedPage } from '../../src/search/page-index.js';
import { vectorStride } from '../../src/search/row-vectors.js';
import { normalizeVector } from '../../src/search/vectors.js';
import { deleteDocuments, insertDocument, insertPages } from '../../src/store/documents.js';
import type { PageSelection } from '../../src/store/pages.js';
import { replaceEmbeddings, SUPERSEDED_EMBEDDING_MODEL, supersededPages } from '../../src/store/reembedding.js';
import { storeIdentity } from '../../src/store/store-identity.js';
import { ENGINES, openTestStore, type TestStore } from '../helpers/stores.js';

const WORDS = ['wing', 'flow', 'shock', 'boundary', 'layer', 'heat', 'transfer', 'pressure', 'drag', 'lift', 'nozzle', 'plate'];

function textOf(n: number): string {
  const words: string[] = [];
  for (let i = 0; i < 3 + (n % 7); i++) words.push(WORDS[(n * (i + 3)) % WORDS.length]);
  return `${words.join(' ')} page ${n}.`;
}

/** Words some page holds, and some none does (stop words count as known). */
const PROBES = [...WORDS, 'boundaries', 'the', 'zebra', '17', '1299', '1400'];

const embed = (text: string) => normalizeVector(hashEmbed(text))!;
/** What the superseded model makes of a text: another vector of the same text. */
const embedSuperseded = (text: string) => normalizeVector(hashEmbed(`former ${text} model`))!;

describe.each(ENGINES)('page index snapshots on %s', (engine) => {
  let store: TestStore;
  let pool: ScanPool;
  let contentDir: string;
  let next = 0;
  /** The workspace read through the codes, and one with pages of the superseded model. */
  let coded: number;
  let mixed: number;
  const documents = new Map<number, number[]>();
  const opened: PageIndex[] = [];

  async function addDocuments(workspaceId: number, count: number, superseded = false): Promise<void> {
    await store.db.transaction().execute(async (trx) => {
      for (let i = 0; i < count; i++) {
        const n = next++;
        const doc = await insertDocument(trx, {
          workspaceId, externalId: null, filePath: `p/${n}`, fileUrl: null, metadata: { tag: n % 3 === 0 ? 'red' : 'blue' }, source: 'test', taskIdentifier: null,
        });
        documents.get(workspaceId)!.push(doc.id);
        const content = textOf(n);
        const embedding = n % 10 === 0 ? null : superseded && n % 2 === 0 ? embedSuperseded(content) : embed(content);
        const model = embedding === null ? null : superseded && n % 2 === 0 ? SUPERSEDED_EMBEDDING_MODEL : 'test';
        await insertPages(trx, workspaceId, doc.id, [{ pageNumber: 1, content, embedding, embeddingModel: model, paragraphs: [] }]);
      }
    });
  }

  async function deleteSome(workspaceId: number, every: number): Promise<void> {
    const all = documents.get(workspaceId)!;
    const doomed = all.filter((_, i) => i % every === 1);
    await deleteDocuments(store.db, workspaceId, doomed);
    documents.set(workspaceId, all.filter((_, i) => i % every !== 1));
  }

  /** The store with its page reads counted. */
  function counted(): { reads: PageSelection[]; on: TestStore } {
    const reads: PageSelection[] = [];
    return { reads, on: { ...store, readPages: (selection) => (reads.push(selection), store.readPages(selection)) } };
  }

  /** From a few hundred pages, so that the coded workspace's searches scan its bits first (kept by the snapshot). */
  function indexOn(on: TestStore, snapshots: string | null): PageIndex {
    const index = new PageIndex(on, pool, contentDir, snapshots === null ? null : new IndexSnapshots(snapshots), { bitsMinRows: 500 });
    opened.push(index);
    return index;
  }

  const tagged = (workspaceId: number, tag: string): PageQuery['filter'] => ({
    key: `tag:${tag}`,
    read: async () => {
      const rows = await sql<{ id: number }>`SELECT id FROM documents WHERE workspace_id = ${workspaceId} AND metadata->>'tag' = ${tag}`.execute(store.db);
      return new Set(rows.rows.map((r) => Number(r.id)));
    },
  });

  /** Every kind of search, each one's results in order with their scores, and the words the keyword index knows. */
  async function answers(index: PageIndex, workspaceId: number): Promise<(RankedPage[] | string[])[]> {
    const out: (RankedPage[] | string[])[] = [[...(await index.knownWords(workspaceId, PROBES))].sort()];
    for (const text of ['shock wave', 'boundary layer heat', 'drag lift nozzle']) {
      const query = (alpha: number, extra: Partial<PageQuery> = {}): PageQuery => ({
        vector: Promise.resolve(embed(text)),
        supersededVector: async () => embedSuperseded(text),
        terms: index.queryTerms(text),
        alpha,
        filter: null,
        k: 20,
        minRelevance: 0,
        ...extra,
      });
      for (const q of [
        query(1),
        query(0),
        query(0.5),
        query(1, { filter: tagged(workspaceId, 'red') }),
        query(0.5, { filter: tagged(workspaceId, 'blue') }),
        query(1, { exact: true }),
        query(0.5, { exact: true }),
      ]) {
        out.push(await index.search(workspaceId, q));
      }
    }
    return out;
  }

  /** What `run` gives, with how many rows of codes each of its searches read (after the bits). */
  async function codesGathered<T>(run: () => Promise<T>): Promise<[number[], T]> {
    const scans = vi.spyOn(pool, 'scoreWith');
    try {
      const result = await run();
      return [scans.mock.calls.flatMap(([matrix, , rows]) => (matrix.layout.kind === 'int8' && rows ? [rows.length] : [])), result];
    } finally {
      scans.mockRestore();
    }
  }

  /** The answers of an index loaded from the store, without snapshots. */
  async function fullLoadAnswers(workspaceId: number): Promise<(RankedPage[] | string[])[]> {
    const index = indexOn(store, null);
    try {
      return await answers(index, workspaceId);
    } finally {
      await index.close();
    }
  }

  /** The temporary directories the file made, removed at its end. */
  const made: string[] = [];

  /** A snapshot directory with both workspaces' snapshots, written by an index that loaded them and closed. */
  async function snapshotted(): Promise<string> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-snapshots-'));
    made.push(dir);
    const index = indexOn(store, dir);
    await answers(index, coded);
    await answers(index, mixed);
    await index.close();
    return dir;
  }

  /** The directory of a workspace's snapshot. */
  async function snapshotOf(dir: string, workspaceId: number): Promise<string> {
    return path.join(dir, (await storeIdentity(store.db)).key, String(workspaceId));
  }

  function editManifest(snapshot: string, edit: (manifest: Record<string, unknown>) => void): void {
    const file = path.join(snapshot, 'manifest.json');
    const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    edit(manifest);
    fs.writeFileSync(file, JSON.stringify(manifest));
  }

  /** A full load's reads of a workspace: at least one batch of the load. */
  const loadedFully = (reads: PageSelection[]) => reads.some((r) => 'after' in r);

  beforeAll(async () => {
    store = await openTestStore(engine);
    pool = new ScanPool({ threads: 2 });
    contentDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-index-'));
    made.push(contentDir);
    coded = (await store.db.insertInto('workspaces').values({ name: 'coded' }).returning('id').executeTakeFirstOrThrow()).id;
    mixed = (await store.db.insertInto('workspaces').values({ name: 'mixed' }).returning('id').executeTakeFirstOrThrow()).id;
    documents.set(coded, []);
    documents.set(mixed, []);
    await addDocuments(coded, 1300);
    await addDocuments(mixed, 300, true);
    // Removed slots and moved rows in the state a snapshot keeps.
    await deleteSome(coded, 7);
  }, 180_000);

  afterEach(async () => {
    for (const index of opened.splice(0)) await index.close();
  });

  afterAll(async () => {
    await pool?.close();
    await store?.close();
    for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers from a snapshot as a full load does, bit for bit, without reading the pages, and serves one index at a time', async () => {
    const dir = await snapshotted();
    expect(fs.existsSync(path.join(await snapshotOf(dir, coded), 'manifest.json'))).toBe(true);
    const [loaded, wantCoded] = await codesGathered(() => fullLoadAnswers(coded));
    const want = [wantCoded, await fullLoadAnswers(mixed)];
    const first = counted();
    const restored = indexOn(first.on, dir);
    // The same rows left in doubt by the bits: each row's bound is restored with them.
    const [read, gotCoded] = await codesGathered(() => answers(restored, coded));
    expect(read).toEqual(loaded);
    expect([gotCoded, await answers(restored, mixed)]).toEqual(want);
    expect(first.reads).toEqual([]);
    expect(restored.memory()).toMatchObject({ workspaces: 2 });
    // Claimed while the index holds its files: a second process loads from the store.
    expect(fs.readdirSync(path.dirname(await snapshotOf(dir, coded))).map((name) => name.replace(/-\d+-[0-9a-f]+$/, '')).sort()).toEqual(
      [`${coded}.claimed`, `${mixed}.claimed`].sort(),
    );
    const second = counted();
    expect(await answers(indexOn(second.on, dir), coded)).toEqual(want[0]);
    expect(loadedFully(second.reads)).toBe(true);
  }, 180_000);

  it('serves one of two processes loading at once; the other loads from the store', async () => {
    const dir = await snapshotted();
    const want = await fullLoadAnswers(coded);
    const [a, b] = [counted(), counted()];
    expect(await Promise.all([answers(indexOn(a.on, dir), coded), answers(indexOn(b.on, dir), coded)])).toEqual([want, want]);
    expect([loadedFully(a.reads), loadedFully(b.reads)].sort()).toEqual([false, true]);
  }, 180_000);

  it('sees what changed while no index ran: inserts, deletions, re-embeddings and metadata', async () => {
    const dir = await snapshotted();
    // Another process writes meanwhile.
    await deleteSome(coded, 5);
    await addDocuments(coded, 120);
    const former = await supersededPages(store.db, mixed, 1000);
    expect(former.length).toBeGreaterThan(50);
    await replaceEmbeddings(store.db, former.slice(0, 60).map((p) => ({ id: p.id, embedding: embed(p.content) })), 'test');
    await store.db.updateTable('documents').set({ metadata: JSON.stringify({ tag: 'red' }) }).where('id', 'in', documents.get(coded)!.slice(0, 200)).execute();
    const want = [await fullLoadAnswers(coded), await fullLoadAnswers(mixed)];
    const { reads, on } = counted();
    const restored = indexOn(on, dir);
    expect([await answers(restored, coded), await answers(restored, mixed)]).toEqual(want);
    // Only the changed pages were read: the inserted and the re-embedded ones.
    expect(loadedFully(reads)).toBe(false);
    expect(reads.every((r) => 'ids' in r)).toBe(true);
    expect(reads.flatMap((r) => ('ids' in r ? r.ids : [])).length).toBe(120 + 60);
    // The next clean stop writes a snapshot of the caught-up index, which answers alike.
    await restored.close();
    const again = counted();
    expect([await answers(indexOn(again.on, dir), coded), await answers(indexOn(again.on, dir), mixed)]).toEqual(want);
    expect(again.reads).toEqual([]);
  }, 180_000);

  it('serves the next start again when the index reading it dies, cut to what it held, with the changes since', async () => {
    const dir = await snapshotted();
    const snapshot = await snapshotOf(dir, coded);
    const manifest = JSON.parse(fs.readFileSync(path.join(snapshot, 'manifest.json'), 'utf8')) as { vectorPlaces: number; contents: { end: number } };
    // An index of its own (not closed: it dies), which reads the snapshot and then indexes more pages.
    const dying = new PageIndex(store, pool, contentDir, new IndexSnapshots(dir), { bitsMinRows: 500 });
    await answers(dying, coded);
    await deleteSome(coded, 11);
    await addDocuments(coded, 40);
    await answers(dying, coded);
    const parent = path.dirname(snapshot);
    const [claimed] = fs.readdirSync(parent).filter((name) => name.startsWith(`${coded}.claimed-`));
    // It appended to the snapshot's files past what the manifest covers.
    expect(fs.statSync(path.join(parent, claimed, 'vectors')).size).toBeGreaterThan(manifest.vectorPlaces * vectorStride(1536));
    expect(fs.statSync(path.join(parent, claimed, 'contents')).size).toBeGreaterThan(manifest.contents.end);
    // Its process is gone: a claim of a process id that runs no process. Half the pages it added are deleted since.
    fs.renameSync(path.join(parent, claimed), path.join(parent, `${coded}.claimed-999999999-0f0f`));
    const all = documents.get(coded)!;
    await deleteDocuments(store.db, coded, all.slice(-20));
    documents.set(coded, all.slice(0, -20));
    const want = await fullLoadAnswers(coded);
    const { reads, on } = counted();
    expect(await answers(indexOn(on, dir), coded)).toEqual(want);
    expect(loadedFully(reads)).toBe(false);
    // Only the 20 pages added since the snapshot that are still there were read, and their vectors follow the snapshot's.
    expect(reads.flatMap((r) => ('ids' in r ? r.ids : [])).length).toBe(20);
    const [resumed] = fs.readdirSync(parent).filter((name) => name.startsWith(`${coded}.claimed-${process.pid}-`));
    const embedded = (await store.db.selectFrom('pages').select('id').where('document_id', 'in', all.slice(-40, -20)).where('embedding', 'is not', null).execute()).length;
    expect(fs.statSync(path.join(parent, resumed, 'vectors')).size).toBe((manifest.vectorPlaces + embedded) * vectorStride(1536));
  }, 180_000);

  it('is not used for a position ahead of the store, another store, or once truncated or corrupt', async () => {
    const want = await fullLoadAnswers(coded);
    const refusals: ((snapshot: string) => void)[] = [
      // A store restored from a backup older than the snapshot.
      (snapshot) => editManifest(snapshot, (m) => (m.position = { snapshot: '900000000:900000000:', xmin: '900000000' })),
      (snapshot) => editManifest(snapshot, (m) => (m.store = 'another')),
      (snapshot) => editManifest(snapshot, (m) => (m.migration = '0099_later')),
      (snapshot) => fs.truncateSync(path.join(snapshot, 'codes.bin'), 1000),
      (snapshot) => fs.truncateSync(path.join(snapshot, 'contents'), 10),
      (snapshot) => {
        const file = path.join(snapshot, 'postings.bin');
        const bytes = fs.readFileSync(file);
        bytes[bytes.length >> 1] ^= 0x10;
        fs.writeFileSync(file, bytes);
      },
      (snapshot) => fs.writeFileSync(path.join(snapshot, 'manifest.json'), '{"fingerprint":'),
      (snapshot) => fs.rmSync(path.join(snapshot, 'rowSlot.bin')),
    ];
    for (const spoil of refusals) {
      const dir = await snapshotted();
      const snapshot = await snapshotOf(dir, coded);
      spoil(snapshot);
      const { reads, on } = counted();
      expect(await answers(indexOn(on, dir), coded)).toEqual(want);
      expect(loadedFully(reads)).toBe(true);
      expect(fs.existsSync(snapshot)).toBe(false);
    }
  }, 300_000);

  it.runIf(engine === 'postgres')('is not used for another schema of the same database', async () => {
    const dir = await snapshotted();
    const other = await openTestStore(engine);
    try {
      expect((await storeIdentity(other.db)).key).not.toBe((await storeIdentity(store.db)).key);
      const workspaceId = (await other.db.insertInto('workspaces').values({ name: 'other' }).returning('id').executeTakeFirstOrThrow()).id;
      // The same workspace id as the snapshot's, holding nothing.
      expect(workspaceId).toBe(coded);
      const index = indexOn(other, dir);
      expect(await index.search(workspaceId, { vector: Promise.resolve(embed('shock')), terms: index.queryTerms('shock'), alpha: 0.5, filter: null, k: 10, minRelevance: 0 })).toEqual([]);
      expect(fs.existsSync(await snapshotOf(dir, coded))).toBe(true);
    } finally {
      for (const index of opened.splice(0)) await index.close();
      await other.close();
    }
  }, 120_000);

  it('removes snapshots left half written by processes that are gone, puts back those they claimed, and leaves running ones alone', async () => {
    const dir = await snapshotted();
    const parent = path.dirname(await snapshotOf(dir, coded));
    const gone = path.join(parent, `${coded}.writing-${process.pid}-0a1b`);
    // Older than the snapshot in place: removed.
    const claimed = path.join(parent, `${coded}.claimed-${process.pid}-2c3d`);
    const running = path.join(parent, `${coded}.writing-${process.ppid}-4e5f`);
    for (const left of [gone, claimed, running]) fs.mkdirSync(left);
    // The only one of its workspace: put back.
    fs.renameSync(await snapshotOf(dir, mixed), path.join(parent, `${mixed}.claimed-${process.pid}-6a7b`));
    new IndexSnapshots(dir);
    expect(fs.readdirSync(parent).sort()).toEqual([String(coded), String(mixed), path.basename(running)].sort());
    expect(fs.existsSync(path.join(await snapshotOf(dir, mixed), 'manifest.json'))).toBe(true);
  }, 120_000);
});
