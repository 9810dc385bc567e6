// One call of insert_embedded_documents (migrations 0017 and 0019) for a batch of one-page
// documents from precomputed embeddings: the statement and its arguments, already in the form
// PostgreSQL reads them (array literals as text, the vectors as one binary parameter). The server
// engine runs it through Kysely; the embedded engine's thread (pglite-thread.ts) runs it itself.
import { serialize } from 'pg-protocol';
import type { NewDocument, NewPage } from './documents.js';
import { encodeEmbedding } from './embedding-bytes.js';
import { SUPERSEDED_EMBEDDING_MODEL } from './embedding-models.js';
import { storedParagraphContent } from './paragraph-content.js';
import type { IndexedPage } from './pages.js';
import type { NewTask } from './tasks.js';

/** A one-page document and its task, recorded as done: the document id is filled in. */
export interface EmbeddedDocument {
  document: NewDocument & { taskIdentifier: string };
  page: NewPage;
  task: Omit<NewTask, 'documentId'>;
}

export const EMBEDDED_BATCH_SQL = `SELECT id, task_identifier, page_id FROM insert_embedded_documents(
  $1::int[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
  $10::int[], $11::text[], $12::int[], $13::int[], $14::text[], $15::bytea,
  $16::text[], $17::int[], $18::text[], $19::text[], $20::int[], $21::text[], $22::text[], $23::text[],
  $24::text[], $25::int[], $26::int[], $27::text[], $28::int[], $29::tsvector[])`;

export type BatchArgument = string | Buffer;

/** An array literal's elements: texts (each quoted, so no word needs care) or numbers. */
function elements(values: readonly (string | number | null | undefined)[]): string {
  return values
    .map((value) => {
      if (value === null || value === undefined) return 'NULL';
      if (typeof value === 'number') return String(value);
      // Most texts hold neither character: the scan costs less than the replace.
      return value.includes('"') || value.includes('\\') ? `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"` : `"${value}"`;
    })
    .join(',');
}

/**
 * The statement's arguments for some items, packed where they are known (on the embedded engine,
 * the main thread) so that the writer only joins batches: the array literals' elements (every
 * argument's but the three that count from the batch's start), the vectors' bytes, and the
 * positions to rebase when batches are joined.
 */
export interface PackedBatch {
  /** Each array argument's elements in `EMBEDDED_BATCH_SQL`'s order, `null` at the five built in the join. */
  elements: (string | null)[];
  /** The vectors, one after the other. */
  embeddings: Uint8Array;
  /** The tsvectors as elements of a binary array: each one's length and bytes, or -1 (NULL). */
  tsvectors: Uint8Array;
  /** Each item's vector offset in `embeddings` (0-based), or -1 without one. */
  embeddingAt: number[];
  /** Each paragraph's item (0-based), in order. */
  paragraphItems: number[];
  /** Each sentence's paragraph (0-based), in order. */
  sentenceParagraphs: number[];
  taskIdentifiers: string[];
  workspaceIds: number[];
}

/** The arguments' positions (0-based) that `joinBatches` builds: the vectors, the three positions and the tsvectors. */
const EMBEDDING_OFFSETS = 11;
const EMBEDDINGS = 14;
const PARAGRAPH_DOCS = 24;
const SENTENCE_PARAGRAPHS = 27;
const TSVECTORS = 28;
/** PostgreSQL's type oid of tsvector, which a binary array names for its elements. */
const TSVECTOR_OID = 3614;

/**
 * The items' tsvectors as a binary array's elements (`joinBatches` writes the array's header), in
 * a buffer of their own, which the embedded engine's client transfers to its thread.
 */
function tsvectorElements(items: readonly EmbeddedDocument[]): Uint8Array {
  const bytes = Buffer.from(new ArrayBuffer(items.reduce((sum, { page }) => sum + 4 + (page.tsv?.byteLength ?? 0), 0)));
  let at = 0;
  for (const { page } of items) {
    at = bytes.writeInt32BE(page.tsv ? page.tsv.byteLength : -1, at);
    if (page.tsv) at += page.tsv.copy(bytes, at);
  }
  return new Uint8Array(bytes.buffer);
}

/** A one-dimensional binary array of tsvectors: the header, then the elements of every batch. */
function tsvectorArray(batches: readonly PackedBatch[], count: number): Buffer {
  const header = Buffer.allocUnsafe(20);
  header.writeInt32BE(1, 0); // dimensions
  header.writeInt32BE(1, 4); // may hold NULLs
  header.writeInt32BE(TSVECTOR_OID, 8);
  header.writeInt32BE(count, 12);
  header.writeInt32BE(1, 16); // lower bound
  return Buffer.concat([header, ...batches.map((b) => b.tsvectors)]);
}

/** Packs `items` (at least one) for `joinBatches`. */
export function packBatch(items: readonly EmbeddedDocument[]): PackedBatch {
  const column = (value: (item: EmbeddedDocument) => string | number | null | undefined) => elements(items.map(value));
  // The sentences of all paragraphs in one flat array, each with its paragraph's number.
  const sentences: string[] = [];
  const sentenceParagraphs: number[] = [];
  const paragraphItems: number[] = [];
  const paragraphIndexes: number[] = [];
  const paragraphContents: (string | null)[] = [];
  items.forEach((item, i) =>
    item.page.paragraphs.forEach((paragraph, index) => {
      for (const sentence of paragraph.sentences) {
        sentences.push(sentence);
        sentenceParagraphs.push(paragraphItems.length);
      }
      paragraphItems.push(i);
      paragraphIndexes.push(index);
      paragraphContents.push(storedParagraphContent(paragraph));
    }),
  );
  // The embeddings travel as one binary parameter, each at its offset: in an array they would
  // be hex text, twice the bytes, for both sides to encode and decode.
  const vectors = items.map(({ page }) => (page.embedding ? encodeEmbedding(page.embedding) : null));
  const embeddings = new Uint8Array(vectors.reduce((sum, v) => sum + (v?.byteLength ?? 0), 0));
  let offset = 0;
  const embeddingAt = vectors.map((v) => {
    if (!v) return -1;
    embeddings.set(v, offset);
    offset += v.byteLength;
    return offset - v.byteLength;
  });
  return {
    elements: [
      column((d) => d.document.workspaceId),
      column((d) => d.document.externalId),
      column((d) => d.document.filePath),
      column((d) => d.document.fileUrl),
      column((d) => JSON.stringify(d.document.metadata)),
      column((d) => d.document.source),
      column((d) => d.document.taskIdentifier),
      column((d) => d.document.fileName),
      column((d) => d.document.contentType),
      column((d) => d.page.pageNumber),
      column((d) => d.page.content),
      null,
      elements(vectors.map((v) => v?.byteLength)),
      column((d) => d.page.embeddingModel),
      null,
      column((d) => d.task.identifier),
      column((d) => d.task.workspaceId),
      column((d) => d.task.kind),
      column((d) => d.task.status),
      column((d) => d.task.progress),
      column((d) => d.task.title),
      column((d) => d.task.message),
      column((d) => JSON.stringify(d.task.payload ?? {})),
      elements(sentences),
      null,
      elements(paragraphIndexes),
      elements(paragraphContents),
      null,
      null,
    ],
    embeddings,
    tsvectors: tsvectorElements(items),
    embeddingAt,
    paragraphItems,
    sentenceParagraphs,
    taskIdentifiers: items.map((item) => item.document.taskIdentifier),
    workspaceIds: items.map((item) => item.document.workspaceId),
  };
}

/** The statement's 29 arguments for the batches joined (at least one), in `EMBEDDED_BATCH_SQL`'s order. */
export function joinBatches(batches: readonly PackedBatch[]): BatchArgument[] {
  const embeddingAt: (number | null)[] = [];
  const paragraphDocs: number[] = [];
  const sentenceParagraphs: number[] = [];
  let [items, bytes, paragraphs] = [0, 0, 0];
  for (const batch of batches) {
    // 1-based in the statement, over the joined arrays and bytes.
    for (const at of batch.embeddingAt) embeddingAt.push(at < 0 ? null : bytes + at + 1);
    for (const item of batch.paragraphItems) paragraphDocs.push(items + item + 1);
    for (const paragraph of batch.sentenceParagraphs) sentenceParagraphs.push(paragraphs + paragraph + 1);
    items += batch.taskIdentifiers.length;
    bytes += batch.embeddings.byteLength;
    paragraphs += batch.paragraphItems.length;
  }
  const built = new Map<number, BatchArgument>([
    [EMBEDDING_OFFSETS, `{${elements(embeddingAt)}}`],
    [EMBEDDINGS, batches.length === 1 ? bufferOf(batches[0].embeddings) : Buffer.concat(batches.map((b) => b.embeddings))],
    [PARAGRAPH_DOCS, `{${elements(paragraphDocs)}}`],
    [SENTENCE_PARAGRAPHS, `{${elements(sentenceParagraphs)}}`],
    [TSVECTORS, tsvectorArray(batches, items)],
  ]);
  return batches[0].elements.map((_, k) => {
    const argument = built.get(k);
    if (argument !== undefined) return argument;
    // A batch without paragraphs or sentences adds no elements to theirs.
    const parts = batches.map((b) => b.elements[k]!).filter((part) => part.length > 0);
    return `{${parts.join(',')}}`;
  });
}

const bufferOf = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** The statement's 29 arguments for `items` (at least one), in `EMBEDDED_BATCH_SQL`'s order. */
export function embeddedBatchArguments(items: readonly EmbeddedDocument[]): BatchArgument[] {
  return joinBatches([packBatch(items)]);
}

/**
 * The pages a write committed, by workspace, as the page index would read them back from the
 * store, made from the items that carried them: the stored content, vector and tsvector are the
 * items' own. The tsvector's lexemes come in the order of their first position (the store keeps
 * them sorted), which the keyword index does not depend on. A workspace with a page whose
 * tsvector the database computed (text english-tsvector.ts does not cover) is left out: its next
 * catch-up reads them all.
 */
export function writtenPages(items: readonly EmbeddedDocument[], { documentIds, pageIds }: WrittenIds): Map<number, IndexedPage[]> {
  const groups = new Map<number, IndexedPage[] | null>();
  items.forEach(({ document: { workspaceId }, page }, i) => {
    let group = groups.get(workspaceId);
    if (group === null) return;
    if (!page.tsv) return void groups.set(workspaceId, null);
    if (!group) groups.set(workspaceId, (group = []));
    group.push({
      id: pageIds[i],
      documentId: documentIds[i],
      pageNumber: page.pageNumber,
      content: Buffer.from(page.content),
      embedding: page.embedding,
      tsv: page.tsv,
      superseded: page.embeddingModel === SUPERSEDED_EMBEDDING_MODEL,
    });
  });
  const pages = new Map<number, IndexedPage[]>();
  for (const [workspaceId, group] of groups) if (group) pages.set(workspaceId, group);
  return pages;
}

/** A row of the statement's answer: a document written, and its page. */
export interface WrittenRow {
  id: number;
  task_identifier: string;
  page_id: number;
}

/** The documents' ids and their pages' ids in the items' order. */
export interface WrittenIds {
  documentIds: number[];
  pageIds: number[];
}

/** The statement's rows as ids in the items' order, or null when it wrote nothing (a watched workspace). */
export function writtenIdsInOrder(taskIdentifiers: readonly string[], rows: readonly WrittenRow[]): WrittenIds | null {
  if (rows.length === 0) return null;
  const rowByTask = new Map(rows.map((r) => [r.task_identifier, r]));
  const written = taskIdentifiers.map((identifier) => rowByTask.get(identifier)!);
  return { documentIds: written.map((r) => Number(r.id)), pageIds: written.map((r) => Number(r.page_id)) };
}

/** Named once per session on the embedded engine's thread (node-postgres names its own `folio_<n>`). */
const STATEMENT = 'folio_embedded_batch';

/** The protocol messages of one call: the statement's Parse the first time, then Bind, Execute and Sync. */
export function batchCallMessages(args: BatchArgument[], parsed: boolean): Uint8Array {
  const parse = parsed ? null : serialize.parse({ name: STATEMENT, text: EMBEDDED_BATCH_SQL, types: [] });
  // Bind is written in place, in one buffer with the others: the arguments are megabytes, which
  // serialize's writer copied as it grew, then again to join the messages.
  const lengths = args.map((arg) => (typeof arg === 'string' ? Buffer.byteLength(arg) : arg.byteLength));
  const name = Buffer.byteLength(STATEMENT);
  // Portal and statement names, the format codes, the values with their lengths, one result format.
  const bind = 4 + 1 + name + 1 + 2 + 2 * args.length + 2 + lengths.reduce((sum, n) => sum + 4 + n, 0) + 4;
  const execute = serialize.execute();
  const sync = serialize.sync();
  const bytes = Buffer.allocUnsafeSlow((parse?.length ?? 0) + 1 + bind + execute.length + sync.length);
  let at = 0;
  if (parse) at += parse.copy(bytes, at);
  bytes[at++] = 0x42; // 'B'
  at = bytes.writeInt32BE(bind, at);
  bytes[at++] = 0; // the unnamed portal
  at += bytes.write(STATEMENT, at, 'utf8');
  bytes[at++] = 0;
  at = bytes.writeInt16BE(args.length, at);
  for (const arg of args) at = bytes.writeInt16BE(typeof arg === 'string' ? 0 : 1, at); // text, or binary bytes
  at = bytes.writeInt16BE(args.length, at);
  args.forEach((arg, i) => {
    at = bytes.writeInt32BE(lengths[i], at);
    at += typeof arg === 'string' ? bytes.write(arg, at, 'utf8') : arg.copy(bytes, at);
  });
  at = bytes.writeInt16BE(1, at);
  at = bytes.writeInt16BE(0, at); // results as text
  at += execute.copy(bytes, at);
  sync.copy(bytes, at);
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
}

export interface BatchAnswer {
  /** Whether the statement is now parsed in the session. */
  parsed: boolean;
  rows: WrittenRow[];
  /** PostgreSQL's error, if the call failed. */
  error: { code: string; message: string } | null;
}

/** PostgreSQL's code and message from the fields of an ErrorResponse, answer[from, end). */
export function errorOf(answer: Buffer, from: number, end: number): { code: string; message: string } {
  const fields = new Map<string, string>();
  for (let field = from; field < end && answer[field] !== 0; ) {
    const zero = answer.indexOf(0, field + 1);
    fields.set(String.fromCharCode(answer[field]), answer.toString('utf8', field + 1, zero));
    field = zero + 1;
  }
  return { code: fields.get('C') ?? '', message: fields.get('M') ?? 'the embedded database failed' };
}

/** Reads the server's answer to `batchCallMessages`. */
export function readBatchAnswer(blocks: readonly Uint8Array[]): BatchAnswer {
  const answer = Buffer.concat(blocks);
  const result: BatchAnswer = { parsed: false, rows: [], error: null };
  for (let at = 0; at + 5 <= answer.length; ) {
    const type = String.fromCharCode(answer[at]);
    const end = at + 1 + answer.readInt32BE(at + 1);
    let field = at + 5;
    if (type === '1') {
      result.parsed = true;
    } else if (type === 'D') {
      const values: string[] = [];
      for (let n = answer.readInt16BE(field), i = 0; i < n; i++) {
        const length = answer.readInt32BE(field + 2);
        values.push(answer.toString('utf8', field + 6, field + 6 + Math.max(0, length)));
        field += 4 + Math.max(0, length);
      }
      result.rows.push({ id: Number(values[0]), task_identifier: values[1], page_id: Number(values[2]) });
    } else if (type === 'E') {
      result.error = errorOf(answer, field, end);
    }
    at = end;
  }
  return result;
}

/**
 * The session's transaction status after an answer that ends with ReadyForQuery: 'I' idle,
 * 'T' in a transaction, 'E' in a failed one; null when the answer does not end with one.
 */
export function statusAfter(blocks: readonly Uint8Array[]): string | null {
  const tail: number[] = [];
  for (let b = blocks.length - 1; b >= 0 && tail.length < 6; b--) {
    for (let i = blocks[b].length - 1; i >= 0 && tail.length < 6; i--) tail.unshift(blocks[b][i]);
  }
  const isReady = tail.length === 6 && tail[0] === 0x5a && tail[1] === 0 && tail[2] === 0 && tail[3] === 0 && tail[4] === 5;
  return isReady ? String.fromCharCode(tail[5]) : null;
}
