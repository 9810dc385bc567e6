// File and URL ingest routes (asynchronous: 201 with a task to poll), and the download of
// a document's original file.
import multipart from '@fastify/multipart';
import { Type } from 'typebox';
import type { FastifyPluginAsync, FastifyTypeProviderDefault } from 'fastify';
import { errors } from '../../errors.js';
import { routePlugin, type AppDeps } from '../deps.js';
import { envelope } from '../envelope.js';
import { formBodyLimit, multipartLimits, readUploadForm } from '../upload-form.js';
import {
  ApiKeyHeader,
  Envelope,
  Id,
  IngestReceipt,
  Metadata,
  Nullable,
  UPLOAD_FORMATS,
  UploadedFile,
  documentedForm,
  envelopeErrors,
} from '../schemas.js';

const tags = ['documents'];

// Form fields are short: an external id and a JSON metadata object.
const FIELD_LIMIT_BYTES = 1024 * 1024;

const IngestForm = Type.Object({
  file: UploadedFile,
  external_id: Type.Optional(Type.String({ maxLength: 255, description: 'Ingesting an external id again adds a version' })),
  metadata: Type.Optional(Type.String({ description: 'A JSON object, as text: {"team": "finance"}' })),
});

// The download answers with the file's own content type (the one it was uploaded or fetched
// with, application/octet-stream without one), so its document names any type. The reply is
// a stream, which Fastify sends without serializing: this schema only documents it.
const OriginalFile = {
  description: 'The original file, under the content type it was uploaded or fetched with (application/octet-stream when none was given)',
  headers: {
    'content-disposition': { type: 'string', description: "attachment; filename*=UTF-8''<the file name, percent-encoded>" },
  },
  content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
};

export function ingestRoutes(deps: AppDeps): FastifyPluginAsync {
  const { ingest, uploads } = deps.services;
  return routePlugin(async (app) => {
    const form = { fileBytes: deps.config.maxFileBytes, fields: 20, fieldBytes: FIELD_LIMIT_BYTES, parts: 25 };
    await app.register(multipart, { limits: multipartLimits(form), throwFileSizeLimit: false });
    app.post(
      '/documents/ingest',
      {
        config: { scope: 'write', swaggerTransform: documentedForm(IngestForm) },
        bodyLimit: formBodyLimit(form),
        schema: {
          operationId: 'ingestFile',
          tags,
          summary: 'Upload a file (multipart: file, external_id?, metadata? as a JSON object string) and start processing',
          description: UPLOAD_FORMATS,
          headers: ApiKeyHeader,
          consumes: ['multipart/form-data'],
          response: { 201: Envelope(IngestReceipt), ...envelopeErrors },
        },
      },
      async (request, reply) => {
        if (!request.isMultipart()) throw errors.unsupportedMediaType('Send the file as multipart/form-data');
        const { upload, fields } = await readUploadForm(request, uploads);
        const receipt = await ingest.acceptUpload(request.principal.workspaceId, upload, fields);
        return reply.status(201).send(envelope(receipt));
      },
    );

    app.post(
      '/documents/ingest/url',
      {
        config: { scope: 'write' },
        schema: {
          operationId: 'ingestUrl',
          tags,
          summary: 'Ingest a document fetched from an http(s) URL (asynchronous)',
          headers: ApiKeyHeader,
          body: Type.Object({
            url: Type.String({ minLength: 1, maxLength: 2048 }),
            external_id: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
            metadata: Type.Optional(Nullable(Metadata)),
          }),
          response: { 201: Envelope(IngestReceipt), ...envelopeErrors },
        },
      },
      async (request, reply) => reply.status(201).send(envelope(await ingest.acceptUrl(request.principal.workspaceId, request.body))),
    );

    // Without the schema types: the reply is the file's stream, which no JSON schema describes.
    app.withTypeProvider<FastifyTypeProviderDefault>().get<{ Params: { document_id: number } }>(
      '/documents/internal/:document_id/file',
      {
        config: { scope: 'read' },
        schema: {
          operationId: 'downloadDocumentFile',
          tags,
          summary: 'The original file of a document ingested from a file or a URL',
          headers: ApiKeyHeader,
          params: Type.Object({ document_id: Id }),
          response: { 200: OriginalFile, ...envelopeErrors },
        },
      },
      async (request, reply) => {
        const file = await ingest.openDocumentFile(request.principal.workspaceId, request.params.document_id);
        reply.header('content-type', file.contentType);
        reply.header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(file.fileName)}`);
        return reply.send(file.stream);
      },
    );
  });
}
