// Request and response schemas shared by routes: declared once, they validate requests,
// type the handlers and document the API in /openapi.json.
import type { SwaggerTransform } from '@fastify/swagger';
import { Type, type TSchema, type Static, type TUnsafe } from 'typebox';
import { LISTED_TASK_KINDS } from '../tasks/listing.js';

/** `T | null` as one JSON Schema type list (cleaner 422s than an anyOf). */
export function Nullable<T extends TSchema>(schema: T): TUnsafe<Static<T> | null> {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [(schema as { type?: unknown }).type, 'null'] });
}

/** One of `values`, typed as their union (a plain enum: cleaner 422s than a union of literals). */
export function StringEnum<T extends string>(values: readonly T[], options: { default?: T; description?: string } = {}): TUnsafe<T> {
  return Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });
}

export const MAX_ID = Number.MAX_SAFE_INTEGER;

export const Id = Type.Integer({ minimum: 1, maximum: MAX_ID });

export const Metadata = Type.Record(Type.String(), Type.Unknown(), {
  description: 'Free-form metadata: primitives, arrays and nested objects',
});

export const FilterObject = Type.Record(Type.String(), Type.Unknown(), {
  description: 'Metadata filter in the document-query style ($eq, $in, $and, $regex, ...)',
});

export const ServiceError = Type.Object({ error_code: Type.String(), message: Type.String() });

export const Meta = Type.Object({ timestamp: Type.String({ format: 'date-time' }), version: Type.String() });

export function Envelope<T extends TSchema>(data: T) {
  return Type.Object({ data, success: Type.Boolean(), error: Type.Null(), meta: Meta });
}

export const ErrorEnvelope = Type.Object({
  data: Type.Null(),
  success: Type.Literal(false),
  error: ServiceError,
  meta: Meta,
});

export const ValidationErrorBody = Type.Object({
  detail: Type.Array(Type.Object({ loc: Type.Array(Type.String()), msg: Type.String(), type: Type.String() })),
});

/** Error responses every authenticated envelope route can give. */
export const envelopeErrors = {
  400: ErrorEnvelope,
  401: ErrorEnvelope,
  403: ErrorEnvelope,
  404: ErrorEnvelope,
  413: ErrorEnvelope,
  415: ErrorEnvelope,
  422: ValidationErrorBody,
  429: ErrorEnvelope,
  500: ErrorEnvelope,
  503: ErrorEnvelope,
};

/** The same for routes that answer bare objects or `{data}`. */
export const bareErrors = {
  400: ServiceError,
  401: ServiceError,
  403: ServiceError,
  404: ServiceError,
  422: ValidationErrorBody,
  429: ServiceError,
  500: ServiceError,
};

export const ApiKeyHeader = Type.Object({
  'x-api-key': Type.Optional(Type.String({ description: 'API key; identifies the workspace' })),
});

export const Document = Type.Object({
  id: Type.Integer(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  external_id: Nullable(Type.String()),
  file_path: Type.String(),
  file_url: Nullable(Type.String()),
  document_metadata: Metadata,
});

export const DocumentWithPages = Type.Object({
  ...Document.properties,
  pages: Type.Array(Type.Object({ id: Type.Integer({ description: 'The page id, for GET /api/v1/documents/content/pages/{page_id}' }), content: Type.String(), page_number: Type.Integer() })),
});

export const Sentence = Type.Object({
  id: Type.Integer(),
  paragraph_id: Type.Integer(),
  sentence_index: Type.Integer(),
  content: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
});

export const Paragraph = Type.Object({
  id: Type.Integer(),
  page_id: Type.Integer(),
  paragraph_index: Type.Integer(),
  content: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  sentences: Type.Array(Sentence),
});

export const Page = Type.Object({
  id: Type.Integer(),
  document_id: Type.Integer(),
  page_number: Type.Integer(),
  content: Type.String(),
  created_at: Type.String({ description: 'UTC date-time without zone suffix' }),
  paragraphs: Type.Optional(Type.Array(Paragraph)),
});

export const IngestReceipt = Type.Object({
  task_identifier: Type.String(),
  file_path: Type.String(),
  external_id: Nullable(Type.String()),
  document_id: Type.Optional(Type.Integer()),
});

export const DeleteResult = Type.Object({ deleted_count: Type.Integer(), deleted_ids: Type.Array(Type.Integer()) });

export const DeletePreview = Type.Object({ document_count: Type.Integer(), document_ids: Type.Array(Type.Integer()) });

export const DocumentFilters = Type.Object({
  metadata_filter: Type.Optional(Nullable(FilterObject)),
  created_at_filter: Type.Optional(Nullable(FilterObject)),
  updated_at_filter: Type.Optional(Nullable(FilterObject)),
});

/** The paging parameters of a listing. */
export const ListQuery = {
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 50, description: 'Items per page' }),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: "The previous page's next_cursor; the same sort and order must be asked" })),
  order: StringEnum(['desc', 'asc'], { default: 'desc', description: 'desc: newest first' }),
};

const NextCursor = Nullable(Type.String({ description: 'The cursor of the next page; null on the last page' }));

/** A filter object sent in a query string, as JSON text. */
export function JsonQueryFilter(description: string) {
  return Type.Optional(Type.String({ maxLength: 65536, description: `${description}, as JSON text (URL-encoded)` }));
}

export const ListedDocument = Type.Object({
  ...Document.properties,
  version: Type.Integer({ description: 'Position among the existing versions of its external_id, oldest first (1 without an external_id)' }),
  file_name: Nullable(Type.String()),
  content_type: Nullable(Type.String()),
  page_count: Type.Integer(),
});

export const DocumentList = Type.Object({
  documents: Type.Array(ListedDocument),
  next_cursor: NextCursor,
});

export const TASK_STATUSES = ['PENDING', 'PROCESSING', 'RETRYING', 'COMPLETED', 'FAILED'] as const;

export const TaskStatus = Type.Object({
  title: Type.String(),
  message: Type.String(),
  progress: Type.Integer(),
  status: Type.String({ enum: [...TASK_STATUSES] }),
});

export const ListedTask = Type.Object({
  task_identifier: Type.String(),
  kind: Type.String({ enum: [...LISTED_TASK_KINDS] }),
  ...TaskStatus.properties,
  file_name: Nullable(Type.String({ description: "The file's name: an upload's, or a URL's once fetched" })),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

export const TaskList = Type.Object({
  tasks: Type.Array(ListedTask),
  next_cursor: NextCursor,
});

/** What an upload endpoint takes, for its OpenAPI description. */
export const UPLOAD_FORMATS = 'PDF, DOCX, HTML, Markdown, plain text and images (PNG, JPEG, TIFF, WebP; read by OCR), detected from the bytes; at most FOLIO_MAX_FILE_MB.';

/** The file part of an upload form. */
export const UploadedFile = Type.String({ format: 'binary', description: UPLOAD_FORMATS });

/**
 * A multipart form, in /openapi.json only (set as the route's `config.swaggerTransform`):
 * upload routes read their parts themselves (upload-form.ts), and a body schema given to
 * Fastify would validate a body that multipart requests never have.
 */
export function documentedForm(form: TSchema): SwaggerTransform {
  return ({ schema, url }) => ({ schema: { ...schema, body: form }, url });
}
