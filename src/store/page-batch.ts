// Pages for the page index (a batch of a workspace's load, or the pages a catch-up adds), read
// in PostgreSQL's binary format: each embedding comes as its stored bytes, not as base64 text
// that PostgreSQL encodes, the driver turns into an 8 KB string per page and the main thread
// decodes; each tsvector in the form the keyword index reads without making a string of it;
// each content as the UTF-8 the index's content file keeps. No string is made of any of them.
// The embedded engine's thread runs the statements itself and packs a batch into a few typed
// arrays that it hands over without copying; the server engine reads the same rows through
// COPY (page-copy.ts) and packs them alike.
import { serialize } from 'pg-protocol';
import { errorOf } from './embedded-batch.js';
import { SUPERSEDED_EMBEDDING_MODEL } from './embedding-models.js';
import type { IndexedPage, PageSelection } from './pages.js';
import { codeSpace, encodeRow, type RowCode } from './vector-codes.js';

// The last column says whether the embedding is of the superseded model (a constant, not input).
const COLUMNS = `id, document_id, page_number, content, embedding, tsv, coalesce(embedding_model = '${SUPERSEDED_EMBEDDING_MODEL}', false)`;

/** The statement, by name, that reads each kind of selection. */
const STATEMENTS = {
  folio_page_batch: `SELECT ${COLUMNS} FROM pages WHERE workspace_id = $1::int AND id > $2::bigint ORDER BY id LIMIT $3::int`,
  folio_pages_by_id: `SELECT ${COLUMNS} FROM pages WHERE id = ANY($1::bigint[]) ORDER BY id`,
  folio_pages_of_documents: `SELECT ${COLUMNS} FROM pages WHERE document_id = ANY($1::bigint[]) ORDER BY id`,
};

/**
 * The statements as COPY to binary output, for the server engine (page-copy.ts), where
 * node-postgres hands over COPY's data as bytes but decodes every field of a row as text. COPY
 * takes no parameters: the selection comes as JSON in a session setting set just before.
 */
const SELECTION = `current_setting('folio.page_selection')::jsonb`;
export const COPIES: Record<keyof typeof STATEMENTS, string> = {
  folio_page_batch: `COPY (SELECT ${COLUMNS} FROM pages WHERE workspace_id = (${SELECTION}->>'workspaceId')::int AND id > (${SELECTION}->>'after')::bigint ORDER BY id LIMIT (${SELECTION}->>'limit')::int) TO STDOUT (FORMAT binary)`,
  folio_pages_by_id: `COPY (SELECT ${COLUMNS} FROM pages WHERE id = ANY(ARRAY(SELECT jsonb_array_elements_text(${SELECTION}->'ids'))::bigint[]) ORDER BY id) TO STDOUT (FORMAT binary)`,
  folio_pages_of_documents: `COPY (SELECT ${COLUMNS} FROM pages WHERE document_id = ANY(ARRAY(SELECT jsonb_array_elements_text(${SELECTION}->'documentIds'))::bigint[]) ORDER BY id) TO STDOUT (FORMAT binary)`,
};

/** Bytes to set aside for a page read's answer before it arrives, at most: see firstBlockAfter. */
const LARGEST_FIRST_BLOCK = 32 * 1024 * 1024;

/**
 * Bytes to set aside for a page read's answer, given the last one's length: the next (a load's
 * next batch) likely takes about as much, so it is gathered in one block instead of copied
 * together from smaller ones. At most LARGEST_FIRST_BLOCK: after a batch of very large pages the
 * next read does not set aside as much at once.
 */
export function firstBlockAfter(lastRead: number): number {
  return Math.min(LARGEST_FIRST_BLOCK, Math.ceil(lastRead * 1.25));
}

/** The name of the statement that reads `selection`. */
export function statementOf(selection: PageSelection): keyof typeof STATEMENTS {
  if ('ids' in selection) return 'folio_pages_by_id';
  return 'documentIds' in selection ? 'folio_pages_of_documents' : 'folio_page_batch';
}

/**
 * A batch of pages as the thread hands it over: per page, its numbers, where its texts are in
 * the answer's bytes, and where its vector is in one array of them all.
 */
export interface PackedPages {
  ids: Float64Array;
  documentIds: Float64Array;
  pageNumbers: Int32Array;
  /** The answer as it was received: the contents are UTF-8 stretches of it, the tsvectors binary ones. */
  text: Uint8Array;
  contentAt: Int32Array;
  contentEnd: Int32Array;
  /** -1 where the page has no tsvector. */
  tsvAt: Int32Array;
  tsvEnd: Int32Array;
  /** Every embedding of the batch, one after another. */
  vectors: Float32Array;
  /** Per page, where its embedding starts in `vectors`, or -1 without one; and its length. */
  vectorAt: Int32Array;
  vectorLength: Int32Array;
  /**
   * Every embedding's code (vector-codes.ts), one after another, made here rather than on the
   * request thread; per page, where its code starts in `codes` (-1 without an embedding), the
   * code's error bound and the embedding's norm.
   */
  codes: Uint8Array;
  codeAt: Int32Array;
  codeError: Float32Array;
  codeNorm: Float64Array;
  /** Per page, 1 where its embedding is of the superseded model. */
  superseded: Uint8Array;
}

export interface PageBatchAnswer {
  /** Whether the statement is now parsed in the session. */
  parsed: boolean;
  pages: PackedPages;
  /** PostgreSQL's error, if the statement failed. */
  error: { code: string; message: string } | null;
}

/** The protocol messages that read the selected pages, results in binary; `parsed` names the statements the session holds. */
export function pageBatchMessages(selection: PageSelection, parsed: ReadonlySet<string>): Uint8Array {
  const name = statementOf(selection);
  const values =
    'ids' in selection
      ? [`{${selection.ids.join(',')}}`]
      : 'documentIds' in selection
        ? [`{${selection.documentIds.join(',')}}`]
        : [selection.workspaceId, selection.after, selection.limit].map(String);
  const messages = [
    ...(parsed.has(name) ? [] : [serialize.parse({ name, text: STATEMENTS[name], types: [] })]),
    serialize.bind({ statement: name, values, binary: true }),
    serialize.execute(),
    serialize.sync(),
  ];
  return new Uint8Array(Buffer.concat(messages));
}

/**
 * Where each page's fields are in an answer's bytes, row by row, packed at the end. A row is
 * seven fields in COLUMNS' order, each its length (-1: null) and its bytes in binary format: the
 * same in a DataRow message and in a tuple of COPY's binary format.
 */
class PageRows {
  readonly #answer: Buffer;
  readonly #ids: number[] = [];
  readonly #documentIds: number[] = [];
  readonly #pageNumbers: number[] = [];
  // Where each page's texts and vector are in the answer (-1 for a null).
  readonly #contentAt: number[] = [];
  readonly #contentEnd: number[] = [];
  readonly #tsvAt: number[] = [];
  readonly #tsvEnd: number[] = [];
  readonly #vectorFrom: number[] = [];
  readonly #vectorTo: number[] = [];
  readonly #superseded: number[] = [];
  #vectorBytes = 0;

  constructor(answer: Buffer) {
    this.#answer = answer;
  }

  /** Notes the row whose first field starts at `at`; returns where the row ends. */
  add(at: number): number {
    const answer = this.#answer;
    let field = at;
    const next = (): [number, number] => {
      const length = answer.readInt32BE(field);
      const start = field + 4;
      field = start + Math.max(0, length);
      return length < 0 ? [-1, -1] : [start, start + length];
    };
    this.#ids.push(Number(answer.readBigInt64BE(next()[0])));
    this.#documentIds.push(Number(answer.readBigInt64BE(next()[0])));
    this.#pageNumbers.push(answer.readInt32BE(next()[0]));
    const [content, contentStop] = next();
    const [vector, vectorStop] = next();
    const [tsv, tsvStop] = next();
    const [superseded] = next();
    this.#superseded.push(superseded >= 0 && answer[superseded] === 1 ? 1 : 0);
    if ((vectorStop - vector) % 4 !== 0) throw new Error(`a stored embedding of ${vectorStop - vector} bytes is not float32`);
    this.#vectorBytes += vectorStop - vector;
    this.#contentAt.push(content);
    this.#contentEnd.push(contentStop);
    this.#vectorFrom.push(vector);
    this.#vectorTo.push(vectorStop);
    this.#tsvAt.push(tsv);
    this.#tsvEnd.push(tsvStop);
    return field;
  }

  /** The rows noted, with `bytes` (the answer) as their texts' buffer. */
  pack(bytes: Uint8Array): PackedPages {
    const count = this.#ids.length;
    // Copied out to an aligned array; the stored form is little-endian float32, as this machine's typed arrays are.
    const vectors = new Uint8Array(this.#vectorBytes);
    const vectorAt = new Int32Array(count);
    const vectorLength = new Int32Array(count);
    let filled = 0;
    for (let i = 0; i < count; i++) {
      const from = this.#vectorFrom[i];
      const to = this.#vectorTo[i];
      vectorAt[i] = from < 0 ? -1 : filled / 4;
      if (from < 0) continue;
      vectors.set(this.#answer.subarray(from, to), filled);
      vectorLength[i] = (to - from) / 4;
      filled += to - from;
    }
    const floats = new Float32Array(vectors.buffer);
    const embedded = vectorAt.filter((at) => at >= 0).length;
    const rowBytes = embedded > 0 ? codeSpace(vectorLength[vectorAt.findIndex((at) => at >= 0)]).rowBytes : 0;
    const codes = new Uint8Array(embedded * rowBytes);
    const codeAt = new Int32Array(count).fill(-1);
    const codeError = new Float32Array(count);
    const codeNorm = new Float64Array(count);
    let coded = 0;
    for (let i = 0; i < count; i++) {
      if (vectorAt[i] < 0) continue;
      const vector = floats.subarray(vectorAt[i], vectorAt[i] + vectorLength[i]);
      const code = encodeRow(codeSpace(vector.length), vector);
      if (code.bytes.length !== rowBytes) continue; // an embedding of other dimensions: coded where it is indexed, if ever
      codes.set(code.bytes, coded);
      codeAt[i] = coded;
      codeError[i] = code.error;
      codeNorm[i] = code.norm;
      coded += rowBytes;
    }
    return {
      ids: Float64Array.from(this.#ids),
      documentIds: Float64Array.from(this.#documentIds),
      pageNumbers: Int32Array.from(this.#pageNumbers),
      text: bytes,
      contentAt: Int32Array.from(this.#contentAt),
      contentEnd: Int32Array.from(this.#contentEnd),
      tsvAt: Int32Array.from(this.#tsvAt),
      tsvEnd: Int32Array.from(this.#tsvEnd),
      vectors: floats,
      vectorAt,
      vectorLength,
      codes,
      codeAt,
      codeError,
      codeNorm,
      superseded: Uint8Array.from(this.#superseded),
    };
  }
}

/** A Buffer over `bytes` (no copy), to read its numbers. */
function bufferOf(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
}

/** Reads the answer to `pageBatchMessages`: its rows packed, or PostgreSQL's error. */
export function readPageBatch(blocks: readonly Uint8Array[]): PageBatchAnswer {
  // The answer in one buffer of its own (not a slice of Node's shared pool), since it is handed over.
  let bytes = blocks[0];
  if (blocks.length > 1) {
    bytes = new Uint8Array(blocks.reduce((sum, block) => sum + block.length, 0));
    let at = 0;
    for (const block of blocks) {
      bytes.set(block, at);
      at += block.length;
    }
  }
  const answer = bufferOf(bytes);
  const rows = new PageRows(answer);
  let parsed = false;
  let error: PageBatchAnswer['error'] = null;
  for (let at = 0; at + 5 <= answer.length; ) {
    const type = answer[at];
    const end = at + 1 + answer.readInt32BE(at + 1);
    if (type === 0x31) parsed = true;
    // DataRow: a count of fields (two bytes), then the fields.
    else if (type === 0x44) rows.add(at + 7);
    else if (type === 0x45) error = errorOf(answer, at + 5, end);
    at = end;
  }
  return { parsed, pages: rows.pack(bytes), error };
}

/** The signature that opens COPY's binary format. */
const COPY_SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/**
 * Reads the output of a `COPY (SELECT COLUMNS ...) TO STDOUT (FORMAT binary)`: a header, then
 * per row a count of fields (two bytes) and the fields as a DataRow has them, then -1.
 */
export function readPageCopy(bytes: Uint8Array): PackedPages {
  const answer = bufferOf(bytes);
  if (answer.length < 19 || !answer.subarray(0, COPY_SIGNATURE.length).equals(COPY_SIGNATURE)) {
    throw new Error('not the output of COPY in binary format');
  }
  const rows = new PageRows(answer);
  // The header: the signature, 32 bits of flags, and an extension area after its length.
  let at = 19 + answer.readInt32BE(15);
  for (let fields = answer.readInt16BE(at); fields !== -1; fields = answer.readInt16BE(at)) {
    if (fields !== 7) throw new Error(`a row of ${fields} fields where ${COLUMNS} are 7`);
    at = rows.add(at + 2);
  }
  return rows.pack(bytes);
}

/** The buffers of a packed batch, handed over rather than copied. */
export function packedBuffers(pages: PackedPages): ArrayBuffer[] {
  const arrays = [pages.ids, pages.documentIds, pages.pageNumbers, pages.text, pages.contentAt, pages.contentEnd, pages.tsvAt, pages.tsvEnd];
  const vectors = [pages.vectors, pages.vectorAt, pages.vectorLength, pages.codes, pages.codeAt, pages.codeError, pages.codeNorm, pages.superseded];
  return [...arrays, ...vectors].map((a) => a.buffer as ArrayBuffer);
}

/** A tsvector without lexemes, in binary: for a page whose tsvector is null. */
const NO_LEXEMES = new Uint8Array(4);

/** A view of `bytes` from `at` to `end`, empty where `at` is -1 (a null). */
function field(bytes: Uint8Array, at: number, end: number): Uint8Array {
  return at < 0 ? bytes.subarray(0, 0) : bytes.subarray(at, end);
}

/** The pages of a packed batch; their contents, embeddings and tsvectors are views of the batch's arrays. */
export function unpackPages(pages: PackedPages): IndexedPage[] {
  return Array.from(pages.ids, (id, i) => ({
    id,
    documentId: pages.documentIds[i],
    pageNumber: pages.pageNumbers[i],
    content: field(pages.text, pages.contentAt[i], pages.contentEnd[i]),
    embedding: pages.vectorAt[i] < 0 ? null : pages.vectors.subarray(pages.vectorAt[i], pages.vectorAt[i] + pages.vectorLength[i]),
    tsv: pages.tsvAt[i] < 0 ? NO_LEXEMES : pages.text.subarray(pages.tsvAt[i], pages.tsvEnd[i]),
    code: codeOf(pages, i),
    superseded: pages.superseded[i] === 1,
  }));
}

function codeOf(pages: PackedPages, i: number): RowCode | null {
  const at = pages.codeAt[i];
  if (at < 0) return null;
  const bytes = pages.codes.subarray(at, at + codeSpace(pages.vectorLength[i]).rowBytes);
  return { bytes, error: pages.codeError[i], norm: pages.codeNorm[i] };
}
