// Pages for the page index (a batch of a workspace's load, or the pages a catch-up adds), read
// by the embedded engine's thread itself in the protocol's binary format: each embedding comes as its stored bytes, not as base64 text that
// PostgreSQL encodes, the driver turns into an 8 KB string per page and the main thread decodes;
// each tsvector in the form the keyword index reads without making a string of it. The thread
// packs a batch into a few typed arrays that it hands over without copying.
import { serialize } from 'pg-protocol';
import { errorOf } from './embedded-batch.js';
import type { IndexedPage, PageSelection } from './pages.js';

const COLUMNS = 'id, document_id, page_number, content, embedding, tsv';

/** The statement, by name, that reads each kind of selection. */
const STATEMENTS = {
  folio_page_batch: `SELECT ${COLUMNS} FROM pages WHERE workspace_id = $1::int AND id > $2::bigint ORDER BY id LIMIT $3::int`,
  folio_pages_by_id: `SELECT ${COLUMNS} FROM pages WHERE id = ANY($1::bigint[]) ORDER BY id`,
};

/** The name of the statement that reads `selection`. */
export function statementOf(selection: PageSelection): keyof typeof STATEMENTS {
  return 'ids' in selection ? 'folio_pages_by_id' : 'folio_page_batch';
}

/**
 * A batch of pages as the thread hands it over: per page, its numbers, where its texts are in
 * the answer's bytes (decoded on the receiving side, so the thread makes no strings to copy
 * across), and where its vector is in one array of them all.
 */
export interface PackedPages {
  ids: Float64Array;
  documentIds: Float64Array;
  pageNumbers: Int32Array;
  /** The answer as the thread received it: the contents are UTF-8 stretches of it, the tsvectors binary ones. */
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
  const values = 'ids' in selection ? [`{${selection.ids.join(',')}}`] : [selection.workspaceId, selection.after, selection.limit].map(String);
  const messages = [
    ...(parsed.has(name) ? [] : [serialize.parse({ name, text: STATEMENTS[name], types: [] })]),
    serialize.bind({ statement: name, values, binary: true }),
    serialize.execute(),
    serialize.sync(),
  ];
  return new Uint8Array(Buffer.concat(messages));
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
  const answer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const ids: number[] = [];
  const documentIds: number[] = [];
  const pageNumbers: number[] = [];
  // Where each page's texts and vector are in `answer` (-1 for a null).
  const [contentAt, contentEnd, tsvAt, tsvEnd, vectorFrom, vectorTo]: number[][] = [[], [], [], [], [], []];
  let parsed = false;
  let error: PageBatchAnswer['error'] = null;
  let vectorBytes = 0;
  for (let at = 0; at + 5 <= answer.length; ) {
    const type = answer[at];
    const end = at + 1 + answer.readInt32BE(at + 1);
    if (type === 0x31) {
      parsed = true;
    } else if (type === 0x44) {
      // DataRow: a count of fields, then each as its length (-1: null) and its bytes.
      let field = at + 7;
      const next = (): [number, number] => {
        const length = answer.readInt32BE(field);
        const start = field + 4;
        field = start + Math.max(0, length);
        return length < 0 ? [-1, -1] : [start, start + length];
      };
      ids.push(Number(answer.readBigInt64BE(next()[0])));
      documentIds.push(Number(answer.readBigInt64BE(next()[0])));
      pageNumbers.push(answer.readInt32BE(next()[0]));
      const [content, contentStop] = next();
      const [vector, vectorStop] = next();
      const [tsv, tsvStop] = next();
      if ((vectorStop - vector) % 4 !== 0) throw new Error(`a stored embedding of ${vectorStop - vector} bytes is not float32`);
      vectorBytes += vectorStop - vector;
      contentAt.push(content);
      contentEnd.push(contentStop);
      vectorFrom.push(vector);
      vectorTo.push(vectorStop);
      tsvAt.push(tsv);
      tsvEnd.push(tsvStop);
    } else if (type === 0x45) {
      error = errorOf(answer, at + 5, end);
    }
    at = end;
  }
  // Copied out to an aligned array; the stored form is little-endian float32, as this machine's typed arrays are.
  const vectors = new Uint8Array(vectorBytes);
  const vectorAt = new Int32Array(ids.length);
  const vectorLength = new Int32Array(ids.length);
  let filled = 0;
  for (let i = 0; i < ids.length; i++) {
    vectorAt[i] = vectorFrom[i] < 0 ? -1 : filled / 4;
    if (vectorFrom[i] < 0) continue;
    vectors.set(answer.subarray(vectorFrom[i], vectorTo[i]), filled);
    vectorLength[i] = (vectorTo[i] - vectorFrom[i]) / 4;
    filled += vectorTo[i] - vectorFrom[i];
  }
  const pages: PackedPages = {
    ids: Float64Array.from(ids),
    documentIds: Float64Array.from(documentIds),
    pageNumbers: Int32Array.from(pageNumbers),
    text: bytes,
    contentAt: Int32Array.from(contentAt),
    contentEnd: Int32Array.from(contentEnd),
    tsvAt: Int32Array.from(tsvAt),
    tsvEnd: Int32Array.from(tsvEnd),
    vectors: new Float32Array(vectors.buffer),
    vectorAt,
    vectorLength,
  };
  return { parsed, pages, error };
}

/** The buffers of a packed batch, handed over rather than copied. */
export function packedBuffers(pages: PackedPages): ArrayBuffer[] {
  const arrays = [pages.ids, pages.documentIds, pages.pageNumbers, pages.text, pages.contentAt, pages.contentEnd, pages.tsvAt, pages.tsvEnd];
  return [...arrays, pages.vectors, pages.vectorAt, pages.vectorLength].map((a) => a.buffer as ArrayBuffer);
}

/** The pages of a packed batch; their embeddings and tsvectors are views of the batch's arrays. */
export function unpackPages(pages: PackedPages): IndexedPage[] {
  const text = Buffer.from(pages.text.buffer, pages.text.byteOffset, pages.text.byteLength);
  return Array.from(pages.ids, (id, i) => ({
    id,
    documentId: pages.documentIds[i],
    pageNumber: pages.pageNumbers[i],
    content: text.toString('utf8', pages.contentAt[i], pages.contentEnd[i]),
    embedding: pages.vectorAt[i] < 0 ? null : pages.vectors.subarray(pages.vectorAt[i], pages.vectorAt[i] + pages.vectorLength[i]),
    tsv: pages.tsvAt[i] < 0 ? '' : pages.text.subarray(pages.tsvAt[i], pages.tsvEnd[i]),
  }));
}
