// FolioClient: the hand-written helpers over the generated types (uploads, waiting for a
// task, paging, errors thrown as FolioError), with the openapi-fetch client as `raw` for
// every route the helpers do not wrap.
import createClient, { type Client } from 'openapi-fetch';
import { FolioError, FolioTaskFailedError, FolioTaskTimeoutError } from './errors.js';
import type { paths } from './schema.js';
import type {
  Answer,
  AnswerEvent,
  AnswerRequest,
  Document,
  DocumentListQuery,
  DocumentPage,
  DocumentWithPages,
  EmbeddingBatchItem,
  Extraction,
  ExtractionResult,
  IngestReceipt,
  Metadata,
  SearchRequest,
  SearchResponse,
  ListedDocument,
  ListedTask,
  Page,
  TaskListQuery,
  TaskPage,
  TaskStatus,
} from './types.js';

export interface FolioClientOptions {
  /** Where Folio answers, such as `http://127.0.0.1:8080`; the API's paths start with `/api/v1`. */
  baseUrl: string;
  /** Sent as `X-API-Key` on every request, `raw` ones included. */
  apiKey?: string;
  /** A fetch to use instead of the global one (a proxy agent, retries, a test double). */
  fetch?: (request: Request) => Promise<Response>;
}

export interface RequestOptions {
  signal?: AbortSignal;
}

export interface IngestOptions extends RequestOptions {
  metadata?: Metadata;
  /** Ingesting an external id that exists adds a version of that document. */
  externalId?: string;
}

export interface EmbeddingIngest extends IngestOptions {
  content: string;
  /** 1536 numbers; the service normalises the vector. */
  embedding: number[];
}

/** One document of `ingestEmbeddings`: what `ingestEmbedding` takes. */
export type EmbeddingDocument = Omit<EmbeddingIngest, 'signal'>;

/**
 * A file to upload: a path (Node only; streamed from disk), a Blob or File (a File's name is
 * sent), or bytes with the file name to send. The service detects the format from the bytes;
 * the name and type are hints.
 */
export type UploadSource = string | Blob | { data: BlobPart; name: string; type?: string };

export interface WaitOptions extends RequestOptions {
  /** Called with the first status read and with every status that differs from the one before. */
  onProgress?: (status: TaskStatus) => void;
  /** Between two polls; 500 ms unless given. */
  intervalMs?: number;
  /** Give up (FolioTaskTimeoutError) when the task has not ended this long after the call. */
  timeoutMs?: number;
}

export interface PageOptions extends RequestOptions {
  /** Items per request, 1 to 1000; 100 unless given. */
  pageSize?: number;
}

/** The query string of a listing: filter objects as JSON text, lists joined by commas. */
function listingQuery<Q extends object>(query: Q): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(query)
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => [name, Array.isArray(value) ? value.join(',') : typeof value === 'object' && value !== null ? JSON.stringify(value) : value]),
  );
}

type Result<T> = { data?: T; error?: unknown; response: Response };

/** The body of a successful openapi-fetch call, or the FolioError of its error response. */
export async function unwrap<T>(call: Promise<Result<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw FolioError.fromResponse(response.status, error);
  return data as T;
}

export class FolioClient {
  /** The typed openapi-fetch client over every route; pass its calls to `unwrap` for FolioErrors. */
  readonly raw: Client<paths>;

  constructor(options: FolioClientOptions) {
    this.raw = createClient<paths>({
      baseUrl: options.baseUrl,
      fetch: options.fetch,
      headers: options.apiKey === undefined ? undefined : { 'X-API-Key': options.apiKey },
    });
  }

  /** Uploads a file for ingestion; the document exists once its task completes (waitForTask). */
  async upload(source: UploadSource, { metadata, externalId, signal }: IngestOptions = {}): Promise<IngestReceipt> {
    const form = new FormData();
    if (externalId !== undefined) form.append('external_id', externalId);
    if (metadata !== undefined) form.append('metadata', JSON.stringify(metadata));
    const [file, name] = await fileOf(source);
    form.append('file', file, name);
    // The generated type reads the file part (format binary) as a string: FormData needs the cast.
    const receipt = await unwrap(this.raw.POST('/api/v1/documents/ingest', { body: form as never, signal }));
    return receipt.data;
  }

  /** Ingests the document at an http(s) URL, fetched by the service (asynchronous like upload). */
  async ingestUrl(url: string, { metadata, externalId, signal }: IngestOptions = {}): Promise<IngestReceipt> {
    const body = { url, metadata, external_id: externalId };
    return (await unwrap(this.raw.POST('/api/v1/documents/ingest/url', { body, signal }))).data;
  }

  /** Stores a one-page document with its precomputed embedding; searchable when this resolves. */
  async ingestEmbedding({ content, embedding, metadata, externalId, signal }: EmbeddingIngest): Promise<IngestReceipt> {
    const body = { content, embedding, metadata, external_id: externalId };
    return (await unwrap(this.raw.POST('/api/v1/documents/ingest/embedding', { body, signal }))).data;
  }

  /**
   * Stores 1 to 1,000 one-page documents with their precomputed embeddings in one request, each
   * checked and stored on its own: one result per document, in order, with `document` (status
   * 201) or the `error` the single ingest would have answered for it (`FolioError.fromResponse
   * (result.status, result.error)` makes it a FolioError). Throws a FolioError only when the
   * request as a whole is refused (no documents, more than 1,000, a key without write scope).
   */
  async ingestEmbeddings(documents: EmbeddingDocument[], { signal }: RequestOptions = {}): Promise<EmbeddingBatchItem[]> {
    const body = { documents: documents.map(({ content, embedding, metadata, externalId }) => ({ content, embedding, metadata, external_id: externalId })) };
    return (await unwrap(this.raw.POST('/api/v1/documents/ingest/embedding/batch', { body, signal }))).data.results;
  }

  async taskStatus(taskId: string, { signal }: RequestOptions = {}): Promise<TaskStatus> {
    const params = { path: { task_identifier: taskId } };
    return (await unwrap(this.raw.GET('/api/v1/tasks/status/{task_identifier}', { params, signal }))).data;
  }

  /**
   * Polls a task until it ends: resolves to its COMPLETED status, throws FolioTaskFailedError
   * when it FAILED, FolioTaskTimeoutError past `timeoutMs`, and the signal's reason on abort.
   */
  async waitForTask(taskId: string, { onProgress, intervalMs = 500, timeoutMs, signal }: WaitOptions = {}): Promise<TaskStatus> {
    // One signal for the polls and the pauses between them, aborted by the caller or the timeout.
    const stop = new AbortController();
    const forward = () => stop.abort(signal?.reason);
    signal?.addEventListener('abort', forward, { once: true });
    if (signal?.aborted) forward();
    let timedOut = false;
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            stop.abort();
          }, timeoutMs);
    let last: TaskStatus | undefined;
    try {
      for (;;) {
        const status = await this.taskStatus(taskId, { signal: stop.signal });
        if (!last || status.status !== last.status || status.progress !== last.progress || status.message !== last.message) onProgress?.(status);
        last = status;
        if (status.status === 'COMPLETED') return status;
        if (status.status === 'FAILED') throw new FolioTaskFailedError(taskId, status);
        await sleep(intervalMs, stop.signal);
      }
    } catch (error) {
      if (timedOut) throw new FolioTaskTimeoutError(taskId, timeoutMs!, last);
      throw error;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', forward);
    }
  }

  /** A document with its pages, by internal id. */
  async getDocument(documentId: number, { signal }: RequestOptions = {}): Promise<DocumentWithPages> {
    const params = { path: { document_id: documentId } };
    return (await unwrap(this.raw.GET('/api/v1/documents/internal/{document_id}', { params, signal }))).data;
  }

  /** A page by id (the API answers it without the envelope); with `includeParagraphs`, its paragraphs and sentences. */
  async getPage(pageId: number, { includeParagraphs, signal }: RequestOptions & { includeParagraphs?: boolean } = {}): Promise<Page> {
    const params = { path: { page_id: pageId }, query: { include_paragraphs: includeParagraphs } };
    return unwrap(this.raw.GET('/api/v1/documents/content/pages/{page_id}', { params, signal }));
  }

  /** The document a completed ingestion task created, with its pages. */
  async getDocumentByTask(taskId: string, { signal }: RequestOptions = {}): Promise<DocumentWithPages> {
    const params = { path: { task_identifier: taskId } };
    return (await unwrap(this.raw.GET('/api/v1/documents/task/{task_identifier}', { params, signal }))).data;
  }

  /** The latest version of a document by external id, with its pages. */
  async getDocumentByExternalId(externalId: string, { signal }: RequestOptions = {}): Promise<DocumentWithPages> {
    const params = { path: { external_id: externalId } };
    return (await unwrap(this.raw.GET('/api/v1/documents/external/{external_id}', { params, signal }))).data;
  }

  /** Every version of a document by external id, newest first (the API answers them in one list). */
  async versions(externalId: string, { signal }: RequestOptions = {}): Promise<Document[]> {
    const params = { path: { external_id: externalId } };
    return (await unwrap(this.raw.GET('/api/v1/documents/external/{external_id}/versions', { params, signal }))).data;
  }

  /** One page of the document listing (newest first unless `sort`/`order` say otherwise); `next_cursor` asks for the next. */
  async listDocuments(query: DocumentListQuery & { cursor?: string } = {}, { signal }: RequestOptions = {}): Promise<DocumentPage> {
    const params = { query: listingQuery(query) };
    return (await unwrap(this.raw.GET('/api/v1/documents', { params, signal }))).data;
  }

  /**
   * Every document the listing's filters select, fetched a page at a time by cursor: each
   * document that exists throughout the iteration is yielded exactly once.
   */
  documents(query: DocumentListQuery = {}, { pageSize = 100, signal }: PageOptions = {}): AsyncGenerator<ListedDocument> {
    return cursorPaged((cursor) => this.listDocuments({ limit: pageSize, ...query, cursor }, { signal }).then((page) => ({ items: page.documents, next: page.next_cursor })));
  }

  /** One page of the task listing, newest first; `next_cursor` asks for the next. */
  async listTasks(query: TaskListQuery & { cursor?: string } = {}, { signal }: RequestOptions = {}): Promise<TaskPage> {
    const params = { query: listingQuery(query) };
    return (await unwrap(this.raw.GET('/api/v1/tasks', { params, signal }))).data;
  }

  /** Every task the filters select (status, kind, created_at_filter), newest first, a page at a time. */
  tasks(query: TaskListQuery = {}, { pageSize = 100, signal }: PageOptions = {}): AsyncGenerator<ListedTask> {
    return cursorPaged((cursor) => this.listTasks({ limit: pageSize, ...query, cursor }, { signal }).then((page) => ({ items: page.tasks, next: page.next_cursor })));
  }

  /** Ingests a FAILED upload again from the file the service kept, as a new task. */
  async retryTask(taskId: string, { signal }: RequestOptions = {}): Promise<IngestReceipt> {
    const params = { path: { task_identifier: taskId } };
    return (await unwrap(this.raw.POST('/api/v1/tasks/retry/{task_identifier}', { params, signal }))).data;
  }

  /** The workspace and scope of the client's API key. */
  async currentKey({ signal }: RequestOptions = {}): Promise<{ workspace: string; scope: 'read' | 'write' | 'admin' }> {
    return (await unwrap(this.raw.GET('/api/v1/keys/current', { signal }))).data;
  }

  /** Hybrid page search; the body is the API's (`query` or `embedding`, `alpha`, `top_k`, filters...). */
  async search(body: SearchRequest, { signal }: RequestOptions = {}): Promise<SearchResponse> {
    return (await unwrap(this.raw.POST('/api/v1/documents/search/pages', { body, signal }))).data;
  }

  /** An answer to a question from the documents under the filters, with its sources. */
  async answer(body: AnswerRequest, { signal }: RequestOptions = {}): Promise<Answer> {
    // The route also answers in text/event-stream, which only an Accept header asks for: this is the JSON.
    const answered = (await unwrap(this.raw.POST('/api/v1/documents/answer', { body, signal }))) as { data: Answer };
    return answered.data;
  }

  /**
   * The answer as it is written (Server-Sent Events): `sources`, then `delta` pieces of text,
   * then `done` with the body `answer` resolves to. An `error` event after the stream began is
   * thrown as a FolioError; errors before it are thrown as by every other call. Breaking out of
   * the loop, or aborting `signal`, closes the request (and the service stops its model call).
   */
  async *answerStream(body: AnswerRequest, { signal }: RequestOptions = {}): AsyncGenerator<AnswerEvent> {
    const abort = new AbortController();
    const cancel = () => abort.abort(signal?.reason);
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      const { response, error } = await this.raw.POST('/api/v1/documents/answer', {
        body,
        signal: abort.signal,
        headers: { accept: 'text/event-stream' },
        parseAs: 'stream',
      });
      if (!response.ok) throw FolioError.fromResponse(response.status, error);
      for await (const event of serverSentEvents(response.body!)) {
        const parsed = { event: event.event, data: JSON.parse(event.data) as unknown } as AnswerEvent;
        if (parsed.event === 'error') throw FolioError.fromResponse(response.status, parsed.data);
        yield parsed;
      }
    } finally {
      signal?.removeEventListener('abort', cancel);
      abort.abort();
    }
  }

  /** The workspace's extractions, newest first, fetched a page at a time. */
  extractions({ pageSize = 100, signal }: PageOptions = {}): AsyncGenerator<Extraction> {
    return paged(pageSize, async (limit, offset) => {
      const params = { query: { limit, offset } };
      return (await unwrap(this.raw.GET('/api/v1/extractions', { params, signal }))).data;
    });
  }

  /** The results of an extraction's runs, newest first, fetched a page at a time. */
  extractionResults(extractionId: number, { pageSize = 100, signal }: PageOptions = {}): AsyncGenerator<ExtractionResult> {
    return paged(pageSize, async (limit, offset) => {
      const params = { path: { extraction_id: extractionId }, query: { limit, offset } };
      return (await unwrap(this.raw.GET('/api/v1/extractions/{extraction_id}/results', { params, signal }))).data;
    });
  }
}

/**
 * Every item of a list the API pages with limit and offset. The lists are newest first, so
 * an item added meanwhile pushes the last one seen into the next page: seen ids are skipped.
 */
async function* paged<T extends { id: number }>(pageSize: number, fetchPage: (limit: number, offset: number) => Promise<T[]>): AsyncGenerator<T> {
  const seen = new Set<number>();
  for (let offset = 0; ; ) {
    const page = await fetchPage(pageSize, offset);
    for (const item of page) {
      if (seen.has(item.id)) continue;
      seen.add(item.id);
      yield item;
    }
    if (page.length < pageSize) return;
    offset += page.length;
  }
}

/** Every item of a cursor-paged listing: pages are fetched until one comes without a next cursor. */
async function* cursorPaged<T>(fetchPage: (cursor: string | undefined) => Promise<{ items: T[]; next: string | null }>): AsyncGenerator<T> {
  for (let cursor: string | undefined; ; ) {
    const page = await fetchPage(cursor);
    yield* page.items;
    if (page.next === null) return;
    cursor = page.next;
  }
}

async function fileOf(source: UploadSource): Promise<[Blob, string | undefined]> {
  if (typeof source === 'string') {
    // Imported only for a path, so that the client still loads where there is no file system.
    const [{ openAsBlob }, { basename }] = await Promise.all([import('node:fs'), import('node:path')]);
    return [await openAsBlob(source), basename(source)];
  }
  if (source instanceof Blob) return [source, source instanceof File ? source.name : undefined];
  return [new Blob([source.data], { type: source.type }), source.name];
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const abort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', abort);
      resolve();
    }, ms);
    signal.addEventListener('abort', abort, { once: true });
  });
}

/** The events of a text/event-stream body (comments skipped; one data line per event, as Folio sends). */
async function* serverSentEvents(stream: ReadableStream<Uint8Array>): AsyncGenerator<{ event: string; data: string }> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffered += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffered.indexOf('\n\n')) >= 0) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        let event = 'message';
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
        if (data.length > 0) yield { event, data: data.join('\n') };
      }
    }
  } finally {
    reader.releaseLock();
  }
}
