// Extraction routes: definitions (envelope), runs on a URL, an upload or an ingested
// document, and results (run and result routes answer `{data}` and bare service errors).
import multipart from '@fastify/multipart';
import { Type, type TSchema } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import { errors } from '../../errors.js';
import { routePlugin, type AppDeps } from '../deps.js';
import { envelope } from '../envelope.js';
import {
  ApiKeyHeader,
  Envelope,
  Id,
  Nullable,
  ServiceError,
  UPLOAD_FORMATS,
  UploadedFile,
  bareErrors,
  documentedForm,
  envelopeErrors,
} from '../schemas.js';
import { formBodyLimit, multipartLimits, readUploadForm } from '../upload-form.js';

const tags = ['extractions'];

const JsonObject = Type.Record(Type.String(), Type.Unknown());

const Extraction = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  description: Nullable(Type.String()),
  schema: Type.Record(Type.String(), Type.Unknown(), { description: 'The JSON Schema of one record' }),
  multiple: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
});

const ExtractionBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  description: Type.Optional(Nullable(Type.String({ maxLength: 4000 }))),
  schema: Type.Record(Type.String(), Type.Unknown(), {
    description: 'A JSON Schema with "type": "object" and typed "properties" (string, number, integer, boolean, array, object), best with descriptions',
  }),
  multiple: Type.Optional(Type.Boolean({ default: false, description: 'One record per item found (table rows, repeated blocks) instead of one per document' })),
});

const RunReceipt = Type.Object({
  extraction_id: Type.Integer(),
  file_path: Type.String(),
  task_identifier: Type.String({ description: 'RunExtraction:<uuid>' }),
  document_id: Type.Optional(Type.Integer()),
});

const ExtractionResult = Type.Object({
  id: Type.Integer(),
  extraction_id: Type.Integer(),
  extraction_document_id: Type.Integer({ description: 'The text the run read: GET /api/v1/extractions/documents/{extraction_document_id}' }),
  task_identifier: Type.String(),
  results: Type.Array(JsonObject),
  created_at: Type.String({ format: 'date-time' }),
});

const ExtractionDocument = Type.Object({
  id: Type.Integer(),
  extraction_id: Type.Integer(),
  task_identifier: Type.String(),
  source: Type.String({ enum: ['url', 'file', 'document'] }),
  document_id: Nullable(Type.Integer()),
  file_path: Type.String(),
  file_url: Nullable(Type.String()),
  file_name: Nullable(Type.String()),
  title: Nullable(Type.String()),
  pages: Type.Array(Type.Object({ page_number: Type.Integer(), content: Type.String() })),
  created_at: Type.String({ format: 'date-time' }),
});

function Data<T extends TSchema>(data: T) {
  return Type.Object({ data });
}

const dataErrors = { ...bareErrors, 413: ServiceError, 415: ServiceError, 503: ServiceError };

const ExtractionIdParam = Type.Object({ extraction_id: Id });
const Paging = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
});

// Multipart fields are short: the extraction id.
const FIELD_LIMIT_BYTES = 64 * 1024;

export function extractionRoutes(deps: AppDeps): FastifyPluginAsync {
  const { extractions, uploads } = deps.services;
  return routePlugin(async (app) => {
    const form = { fileBytes: deps.config.maxFileBytes, fields: 10, fieldBytes: FIELD_LIMIT_BYTES, parts: 15 };
    await app.register(multipart, { limits: multipartLimits(form), throwFileSizeLimit: false });
    app.post(
      '/extractions',
      {
        config: { scope: 'write' },
        schema: {
          operationId: 'createExtraction',
          tags,
          summary: 'Create an extraction: a named JSON Schema of the records to extract',
          description: 'The schema is checked: 422 names each problem (a missing type, an unsupported keyword or format, an invalid pattern).',
          headers: ApiKeyHeader,
          body: ExtractionBody,
          response: { 201: Envelope(Extraction), ...envelopeErrors },
        },
      },
      async (request, reply) => reply.status(201).send(envelope(await extractions.create(request.principal.workspaceId, request.body))),
    );

    app.get(
      '/extractions',
      {
        config: { scope: 'read' },
        schema: { operationId: 'listExtractions', tags, summary: 'The extractions of the workspace, newest first', headers: ApiKeyHeader, querystring: Paging, response: { 200: Envelope(Type.Array(Extraction)), ...envelopeErrors } },
      },
      async (request) => envelope((await extractions.list(request.principal.workspaceId, request.query.limit, request.query.offset)).extractions),
    );

    app.get(
      '/extractions/:extraction_id',
      {
        config: { scope: 'read' },
        schema: { operationId: 'getExtraction', tags, summary: 'An extraction', headers: ApiKeyHeader, params: ExtractionIdParam, response: { 200: Envelope(Extraction), ...envelopeErrors } },
      },
      async (request) => envelope(await extractions.get(request.principal.workspaceId, request.params.extraction_id)),
    );

    app.delete(
      '/extractions/:extraction_id',
      {
        config: { scope: 'write' },
        schema: {
          operationId: 'deleteExtraction',
          tags,
          summary: 'Delete an extraction with its results (runs still queued fail)',
          headers: ApiKeyHeader,
          params: ExtractionIdParam,
          response: { 200: Envelope(Type.Object({ deleted_count: Type.Integer(), deleted_ids: Type.Array(Type.Integer()), deleted_results: Type.Integer() })), ...envelopeErrors },
        },
      },
      async (request) => envelope(await extractions.delete(request.principal.workspaceId, request.params.extraction_id)),
    );

    app.post(
      '/extractions/run/url',
      {
        config: { scope: 'write', shape: 'data' },
        schema: {
          operationId: 'runExtractionOnUrl',
          tags,
          summary: 'Run an extraction on the file at a URL (asynchronous: poll the task, then fetch the result)',
          headers: ApiKeyHeader,
          body: Type.Object({ extraction_id: Id, url: Type.String({ minLength: 1, maxLength: 2048 }) }),
          response: { 201: Data(RunReceipt), ...dataErrors },
        },
      },
      async (request, reply) => reply.status(201).send({ data: await extractions.runOnUrl(request.principal.workspaceId, request.body) }),
    );

    app.post(
      '/extractions/run/file',
      {
        config: { scope: 'write', shape: 'data', swaggerTransform: documentedForm(Type.Object({ extraction_id: Id, file: UploadedFile })) },
        bodyLimit: formBodyLimit(form),
        schema: {
          operationId: 'runExtractionOnFile',
          tags,
          summary: 'Run an extraction on an uploaded file (multipart: extraction_id, file)',
          description: UPLOAD_FORMATS,
          headers: ApiKeyHeader,
          consumes: ['multipart/form-data'],
          response: { 201: Data(RunReceipt), ...dataErrors },
        },
      },
      async (request, reply) => {
        if (!request.isMultipart()) throw errors.unsupportedMediaType('Send extraction_id and the file as multipart/form-data');
        const { upload, fields } = await readUploadForm(request, uploads);
        return reply.status(201).send({ data: await extractions.runOnUpload(request.principal.workspaceId, upload, fields) });
      },
    );

    app.post(
      '/extractions/run/document',
      {
        config: { scope: 'write', shape: 'data' },
        schema: {
          operationId: 'runExtractionOnDocument',
          tags,
          summary: 'Run an extraction on an ingested document (its stored pages)',
          headers: ApiKeyHeader,
          body: Type.Object({ extraction_id: Id, document_id: Id }),
          response: { 201: Data(RunReceipt), ...dataErrors },
        },
      },
      async (request, reply) => reply.status(201).send({ data: await extractions.runOnDocument(request.principal.workspaceId, request.body) }),
    );

    app.get(
      '/extractions/results/task/:task_identifier',
      {
        config: { scope: 'read', shape: 'data' },
        schema: {
          operationId: 'getExtractionResultByTask',
          tags,
          summary: 'The result of a run by its task identifier (404 saying the task status until it completes)',
          headers: ApiKeyHeader,
          params: Type.Object({ task_identifier: Type.String({ minLength: 1, maxLength: 255 }) }),
          response: { 200: Data(ExtractionResult), ...dataErrors },
        },
      },
      async (request) => ({ data: await extractions.getResultByTask(request.principal.workspaceId, request.params.task_identifier) }),
    );

    app.get(
      '/extractions/results/internal/:result_id',
      {
        config: { scope: 'read', shape: 'data' },
        schema: { operationId: 'getExtractionResult', tags, summary: 'A result by id', headers: ApiKeyHeader, params: Type.Object({ result_id: Id }), response: { 200: Data(ExtractionResult), ...dataErrors } },
      },
      async (request) => ({ data: await extractions.getResult(request.principal.workspaceId, request.params.result_id) }),
    );

    app.get(
      '/extractions/:extraction_id/results',
      {
        config: { scope: 'read', shape: 'data' },
        schema: {
          operationId: 'listExtractionResults',
          tags,
          summary: 'The results of an extraction, newest first',
          headers: ApiKeyHeader,
          params: ExtractionIdParam,
          querystring: Paging,
          response: { 200: Type.Object({ data: Type.Array(ExtractionResult) }), ...dataErrors },
        },
      },
      async (request) => ({ data: await extractions.listResults(request.principal.workspaceId, request.params.extraction_id, request.query.limit, request.query.offset) }),
    );

    app.get(
      '/extractions/documents/:extraction_document_id',
      {
        config: { scope: 'read', shape: 'data' },
        schema: {
          operationId: 'getExtractionDocument',
          tags,
          summary: 'The text a run read (extraction_document_id of a result), page by page',
          headers: ApiKeyHeader,
          params: Type.Object({ extraction_document_id: Id }),
          response: { 200: Data(ExtractionDocument), ...dataErrors },
        },
      },
      async (request) => ({ data: await extractions.getDocument(request.principal.workspaceId, request.params.extraction_document_id) }),
    );
  });
}
