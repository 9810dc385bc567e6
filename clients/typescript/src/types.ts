// Named shapes of the API, read off the generated `paths` so that they follow every
// regeneration of schema.ts.
import type { paths } from './schema.js';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type Ok<O> = O extends { responses: { 200: infer R } } ? Json<R> : O extends { responses: { 201: infer R } } ? Json<R> : never;
type RequestJson<O> = O extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type OkData<O> = Ok<O> extends { data: infer D } ? D : never;
type Query<O> = O extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
type StreamEvent<O> = O extends { responses: { 200: { content: { 'text/event-stream': infer E } } } } ? E : never;

export type IngestReceipt = OkData<paths['/api/v1/documents/ingest/embedding']['post']>;
/** One result of a batch embedding ingest: `{index, status: 201, document}` or `{index, status, error}`. */
export type EmbeddingBatchItem = OkData<paths['/api/v1/documents/ingest/embedding/batch']['post']>['results'][number];
export type TaskStatus = OkData<paths['/api/v1/tasks/status/{task_identifier}']['get']>;
export type Document = OkData<paths['/api/v1/documents/external/{external_id}/versions']['get']>[number];
export type DocumentWithPages = OkData<paths['/api/v1/documents/internal/{document_id}']['get']>;
export type Page = Ok<paths['/api/v1/documents/content/pages/{page_id}']['get']>;
export type DocumentPage = OkData<paths['/api/v1/documents']['get']>;
export type ListedDocument = DocumentPage['documents'][number];
type FilterText = 'metadata_filter' | 'created_at_filter' | 'updated_at_filter';
/** The document listing's parameters, filters as objects and ids as a list; the client sends them as the query string takes them. */
export type DocumentListQuery = Omit<Query<paths['/api/v1/documents']['get']>, FilterText | 'ids'> & {
  metadata_filter?: Record<string, unknown>;
  created_at_filter?: Record<string, unknown>;
  updated_at_filter?: Record<string, unknown>;
  ids?: number[];
};
export type TaskPage = OkData<paths['/api/v1/tasks']['get']>;
export type ListedTask = TaskPage['tasks'][number];
export type TaskListQuery = Omit<Query<paths['/api/v1/tasks']['get']>, 'created_at_filter'> & { created_at_filter?: Record<string, unknown> };
export type SearchRequest = RequestJson<paths['/api/v1/documents/search/pages']['post']>;
export type SearchResponse = OkData<paths['/api/v1/documents/search/pages']['post']>;
export type SearchResult = SearchResponse['results'][number];
export type AnswerRequest = RequestJson<paths['/api/v1/documents/answer']['post']>;
export type Answer = OkData<paths['/api/v1/documents/answer']['post']>;
/** One event of a streamed answer: `sources`, `delta` ({text}), `done` (the JSON body) or `error`. */
export type AnswerEvent = StreamEvent<paths['/api/v1/documents/answer']['post']>;
export type Extraction = OkData<paths['/api/v1/extractions/{extraction_id}']['get']>;
export type ExtractionResult = OkData<paths['/api/v1/extractions/results/internal/{result_id}']['get']>;

/** Free-form document metadata: primitives, arrays and nested objects. */
export type Metadata = Record<string, unknown>;
