// The services the HTTP API calls, each bound once to the parts it needs (store, vector
// index, providers, blob store, queue). runtime.ts builds them; routes only call them.
import type { Readable } from 'node:stream';
import { answerQuestion, prepareAnswer, type AnswerRequest } from './answer/answer.js';
import { MetadataCatalogue } from './answer/catalogue.js';
import { Optimizer } from './answer/optimize.js';
import { deleteByExternalId, deleteById, previewDeleteByExternalId, previewDeleteByFilter } from './documents/deletion.js';
import { EmbeddingIngester } from './documents/ingest-embedding.js';
import { patchMetadata } from './documents/metadata.js';
import { listDocuments } from './documents/listing.js';
import { getDocument, getDocumentByTask, getLatestByExternalId, getPage, getParagraph, listVersions } from './documents/retrieval.js';
import {
  createExtraction,
  deleteExtraction,
  getExtraction,
  getExtractionDocument,
  getResult,
  getResultByTask,
  listExtractions,
  listResults,
  runOnDocument,
  runOnUpload,
  runOnUrl,
} from './extraction/service.js';
import { acceptUpload, acceptUrl, openDocumentFile, retryUpload } from './ingest/accept.js';
import { storeUpload, type StoredUpload } from './sources/index.js';
import type { CachedEmbedder } from './providers/embeddings/index.js';
import type { LlmProvider } from './providers/llm/types.js';
import type { PageIndex } from './search/page-index.js';
import { searchPages, type SearchRequest } from './search/search.js';
import type { BlobStore } from './store/blobs.js';
import { ping, type Store } from './store/engine.js';
import { listTasks } from './tasks/listing.js';
import { getTaskStatus } from './tasks/status.js';
import { issueKey, revokeWorkspaceKey, workspaceKeys } from './workspaces/admin.js';
import type { KeyResolver, Principal } from './workspaces/keys.js';
import { createWebhook, deleteWebhook, listWebhooks, webhookDeliveries } from './webhooks/service.js';

export interface ServiceParts {
  store: Store;
  index: PageIndex;
  embedder: CachedEmbedder;
  /** The language model when one is configured; null runs every feature offline. */
  llm: LlmProvider | null;
  blobs: BlobStore;
  keys: KeyResolver;
  maxFileBytes: number;
  /** Hosts allowed past the private-address guard (FOLIO_URL_ALLOWLIST): webhook URLs are checked against it. */
  urlAllowlist: string[];
  /** Bound on resolving a webhook URL's host when it is created. */
  webhookResolveTimeoutMs: number;
  /** Told when a task is queued (a worker in this process wakes up). */
  onEnqueue: () => void;
  /** Told when a change recorded webhook deliveries (a delivery loop in this process wakes up). */
  onWebhookEvents: () => void;
  /** Told when the model failed during query optimisation and the offline matcher stood in. */
  onOptimizerLlmError: (error: unknown) => void;
  /** Told of each completed search: its alpha and how long it took. */
  onSearch?: (alpha: number, seconds: number) => void;
  /** Told of pages stored by an embedding ingest, and in which workspace. */
  onPagesIngested?: (workspaceId: number, pages: number) => void;
}

/** `fn` with its first argument (its dependencies) given. */
function bind<D, A extends unknown[], R>(deps: D, fn: (deps: D, ...args: A) => R): (...args: A) => R {
  return (...args) => fn(deps, ...args);
}

export function createServices(parts: ServiceParts) {
  const { store, index, embedder, llm, blobs } = parts;
  const { db } = store;
  const optimizer = new Optimizer({ db, catalogue: new MetadataCatalogue(db), llm, onLlmError: parts.onOptimizerLlmError });
  const embeddingIngester = EmbeddingIngester.forStore(store, parts.onWebhookEvents);
  const deletion = { db, blobs, onEvents: parts.onWebhookEvents };
  const webhooks = { db, urlAllowlist: parts.urlAllowlist, resolveTimeoutMs: parts.webhookResolveTimeoutMs };
  const accept = { db, blobs, maxFileBytes: parts.maxFileBytes, onEnqueue: parts.onEnqueue };
  const extraction = { db, blobs, onEnqueue: parts.onEnqueue };

  return {
    health: {
      engine: store.engine,
      ping: () => ping(db),
      vectorIndexMemory: () => index.memory(),
    },
    documents: {
      ingestEmbedding: async (...args: Parameters<EmbeddingIngester['ingest']>) => {
        const stored = await embeddingIngester.ingest(...args);
        parts.onPagesIngested?.(args[0], 1);
        return stored;
      },
      ingestEmbeddings: async (...args: Parameters<EmbeddingIngester['ingestAll']>) => {
        const outcomes = await embeddingIngester.ingestAll(...args);
        const stored = outcomes.filter((o) => o.ok).length;
        if (stored > 0) parts.onPagesIngested?.(args[0], stored);
        return outcomes;
      },
      list: bind(db, listDocuments),
      getByTask: bind(db, getDocumentByTask),
      get: bind(db, getDocument),
      getLatestByExternalId: bind(db, getLatestByExternalId),
      listVersions: bind(db, listVersions),
      getPage: bind(db, getPage),
      getParagraph: bind(db, getParagraph),
      patchMetadata: bind(db, patchMetadata),
      deleteById: bind(deletion, deleteById),
      deleteByExternalId: bind(deletion, deleteByExternalId),
      previewDeleteByExternalId: bind(db, previewDeleteByExternalId),
      previewDeleteByFilter: bind(db, previewDeleteByFilter),
    },
    uploads: {
      store: (stream: Readable, fileName: string | null, contentType: string | null) => storeUpload(accept, stream, fileName, contentType),
      discard: (upload: StoredUpload) => blobs.delete(upload.blobKey),
    },
    ingest: {
      acceptUpload: bind(accept, acceptUpload),
      acceptUrl: bind(accept, acceptUrl),
      openDocumentFile: bind(accept, openDocumentFile),
      retryUpload: bind(accept, retryUpload),
    },
    search: async (workspaceId: number, req: SearchRequest) => {
      const started = performance.now();
      const response = await searchPages({ db, index, embedder, optimizer }, workspaceId, req);
      parts.onSearch?.(req.alpha ?? 1, (performance.now() - started) / 1000);
      return response;
    },
    answer: (workspaceId: number, req: AnswerRequest, onLlmError: (error: unknown) => void) =>
      answerQuestion({ db, index, embedder, llm, optimizer, onLlmError }, workspaceId, req),
    /** The answer's checks and retrieval; the writer it resolves to streams the answer. */
    prepareAnswer: (workspaceId: number, req: AnswerRequest, onLlmError: (error: unknown) => void) =>
      prepareAnswer({ db, index, embedder, llm, optimizer, onLlmError }, workspaceId, req),
    extractions: {
      create: bind(db, createExtraction),
      list: bind(db, listExtractions),
      get: bind(db, getExtraction),
      delete: bind(extraction, deleteExtraction),
      runOnUrl: bind(extraction, runOnUrl),
      runOnUpload: bind(extraction, runOnUpload),
      runOnDocument: bind(extraction, runOnDocument),
      getResultByTask: bind(db, getResultByTask),
      getResult: bind(db, getResult),
      listResults: bind(db, listResults),
      getDocument: bind(db, getExtractionDocument),
    },
    tasks: {
      status: bind(db, getTaskStatus),
      list: bind(db, listTasks),
    },
    webhooks: {
      create: bind(webhooks, createWebhook),
      list: bind(db, listWebhooks),
      delete: bind(db, deleteWebhook),
      deliveries: bind(db, webhookDeliveries),
    },
    keys: {
      issue: bind(db, issueKey),
      list: bind(db, workspaceKeys),
      revoke: async (admin: Principal, id: number) => {
        const result = await revokeWorkspaceKey(db, admin, id);
        parts.keys.clearCache();
        return result;
      },
    },
  };
}

export type Services = ReturnType<typeof createServices>;
