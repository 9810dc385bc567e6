// One call of insert_embedded_documents (migration 0013) for a batch of one-page documents from
// precomputed embeddings: the statement and its arguments, already in the form PostgreSQL reads
// them (array literals as text, the vectors as one binary parameter). The server engine runs it
// through Kysely; the embedded engine's thread (pglite-thread.ts) runs it itself.
import { serialize } from 'pg-protocol';
import type { NewDocument, NewPage } from './documents.js';
import { encodeEmbedding } from './embedding-bytes.js';
import type { NewTask } from './tasks.js';

/** A one-page document and its task, recorded as done: the document id is filled in. */
export interface EmbeddedDocument {
  document: NewDocument & { taskIdentifier: string };
  page: NewPage;
  task: Omit<NewTask, 'documentId'>;
}

export const EMBEDDED_BATCH_SQL = `SELECT id, task_identifier FROM insert_embedded_documents(
  $1::int[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
  $10::int[], $11::text[], $12::int[], $13::int[], $14::text[], $15::bytea,
  $16::text[], $17::int[], $18::text[], $19::text[], $20::int[], $21::text[], $22::text[], $23::text[],
  $24::text[], $25::int[], $26::int[], $27::text[], $28::int[], $29::int[], $30::text[])`;

export type BatchArgument = string | Buffer;

/** A PostgreSQL array literal of texts (every element quoted, so no word needs care) or numbers. */
function arrayLiteral(values: readonly (string | number | null | undefined)[]): string {
  const elements = values.map((value) => {
    if (value === null || value === undefined) return 'NULL';
    if (typeof value === 'number') return String(value);
    return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  });
  return `{${elements.join(',')}}`;
}

/** The statement's 30 arguments for `items` (at least one), in `EMBEDDED_BATCH_SQL`'s order. */
export function embeddedBatchArguments(items: readonly EmbeddedDocument[]): BatchArgument[] {
  const column = (value: (item: EmbeddedDocument) => string | number | null | undefined) => arrayLiteral(items.map(value));
  // A paragraph's sentences are a slice of one flat array: from `first`, `count` of them.
  const paragraphs = items.flatMap((item, i) => item.page.paragraphs.map((paragraph, index) => ({ doc: i + 1, index, paragraph })));
  const sentences: string[] = [];
  const firsts = paragraphs.map(({ paragraph }) => {
    const first = sentences.length + 1;
    for (const sentence of paragraph.sentences) sentences.push(sentence);
    return first;
  });
  // The embeddings travel as one binary parameter, each at its offset (1-based): in an array
  // they would be hex text, twice the bytes, for both sides to encode and decode.
  const vectors = items.map(({ page }) => (page.embedding ? encodeEmbedding(page.embedding) : null));
  let offset = 1;
  const embeddingAt = vectors.map((v) => (v ? (offset += v.byteLength) - v.byteLength : null));
  return [
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
    arrayLiteral(embeddingAt),
    arrayLiteral(vectors.map((v) => v?.byteLength)),
    column((d) => d.page.embeddingModel),
    Buffer.concat(vectors.filter((v) => v !== null)),
    column((d) => d.task.identifier),
    column((d) => d.task.workspaceId),
    column((d) => d.task.kind),
    column((d) => d.task.status),
    column((d) => d.task.progress),
    column((d) => d.task.title),
    column((d) => d.task.message),
    column((d) => JSON.stringify(d.task.payload ?? {})),
    arrayLiteral(sentences),
    arrayLiteral(paragraphs.map((p) => p.doc)),
    arrayLiteral(paragraphs.map((p) => p.index)),
    arrayLiteral(paragraphs.map((p) => p.paragraph.content)),
    arrayLiteral(firsts),
    arrayLiteral(paragraphs.map((p) => p.paragraph.sentences.length)),
    column((d) => d.page.tsv),
  ];
}

/** The statement's rows as document ids in the items' order, or null when it wrote nothing (a watched workspace). */
export function documentIdsInOrder(items: readonly EmbeddedDocument[], rows: readonly { id: number; task_identifier: string }[]): number[] | null {
  if (rows.length === 0) return null;
  const idByTask = new Map(rows.map((r) => [r.task_identifier, Number(r.id)]));
  return items.map((item) => idByTask.get(item.document.taskIdentifier)!);
}

/** Named once per session on the embedded engine's thread (node-postgres names its own `folio_<n>`). */
const STATEMENT = 'folio_embedded_batch';

/** The protocol messages of one call: the statement's Parse the first time, then Bind, Execute and Sync. */
export function batchCallMessages(args: BatchArgument[], parsed: boolean): Uint8Array {
  const messages = [
    ...(parsed ? [] : [serialize.parse({ name: STATEMENT, text: EMBEDDED_BATCH_SQL, types: [] })]),
    serialize.bind({ statement: STATEMENT, values: args }),
    serialize.execute(),
    serialize.sync(),
  ];
  // A buffer of its own: serialize's writer reuses one for the next message.
  return new Uint8Array(Buffer.concat(messages));
}

export interface BatchAnswer {
  /** Whether the statement is now parsed in the session. */
  parsed: boolean;
  rows: { id: number; task_identifier: string }[];
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
      result.rows.push({ id: Number(values[0]), task_identifier: values[1] });
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
