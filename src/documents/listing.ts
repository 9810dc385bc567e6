// The document listing: a page of a workspace's documents under the search's filters, and
// the cursor of the next page.
import type { Kysely } from 'kysely';
import { ValidationError } from '../errors.js';
import { listDocuments as listDocumentRows, type DocumentSort } from '../store/document-list.js';
import { compileDocumentFilter } from '../store/filter.js';
import { decodeCursor, type SortOrder } from '../store/keyset.js';
import type { Database } from '../store/schema.js';
import { parseRequestJson } from '../text/json-text.js';
import { documentView, type DocumentView } from './views.js';

/** A filter as an object, or as the JSON text of one (a query string carries it so). */
type FilterInput = Record<string, unknown> | string | null;

export interface DocumentListRequest {
  limit?: number;
  cursor?: string | null;
  sort?: DocumentSort;
  order?: SortOrder;
  metadata_filter?: FilterInput;
  created_at_filter?: FilterInput;
  updated_at_filter?: FilterInput;
  external_id?: string | null;
  /** Document ids, as a list or comma-separated text. */
  ids?: number[] | string | null;
  latest_only?: boolean;
}

export interface ListedDocumentView extends DocumentView {
  version: number;
  file_name: string | null;
  content_type: string | null;
  page_count: number;
}

export interface DocumentList {
  documents: ListedDocumentView[];
  next_cursor: string | null;
}

export const DEFAULT_LIST_LIMIT = 50;

/** A filter given as JSON text parsed (a 422 at its field when it is not a JSON object). */
export function filterObject(value: FilterInput | undefined, field: string): Record<string, unknown> | null {
  if (value === undefined || value === null || value === '') return null;
  const parsed = typeof value === 'string' ? parseRequestJson(value, [field]) : value;
  if (parsed === null) return null;
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ValidationError([{ path: [field], msg: 'Input should be a JSON object', type: 'dict_type' }]);
  }
  return parsed as Record<string, unknown>;
}

function idList(ids: number[] | string | null | undefined): number[] | null {
  if (ids === undefined || ids === null || ids === '') return null;
  return typeof ids === 'string' ? ids.split(',').map(Number) : ids;
}

export async function listDocuments(db: Kysely<Database>, workspaceId: number, req: DocumentListRequest): Promise<DocumentList> {
  const ordering = { sort: req.sort ?? 'created_at', order: req.order ?? 'desc' } as const;
  const filter = compileDocumentFilter({
    metadata_filter: filterObject(req.metadata_filter, 'metadata_filter'),
    created_at_filter: filterObject(req.created_at_filter, 'created_at_filter'),
    updated_at_filter: filterObject(req.updated_at_filter, 'updated_at_filter'),
  });
  const { rows, next } = await listDocumentRows(db, workspaceId, {
    ...ordering,
    limit: req.limit ?? DEFAULT_LIST_LIMIT,
    after: req.cursor ? decodeCursor(req.cursor, ordering) : null,
    filter,
    externalId: req.external_id ?? null,
    ids: idList(req.ids),
    latestOnly: req.latest_only ?? true,
  });
  return {
    documents: rows.map((row) => ({
      ...documentView(row),
      version: row.version,
      file_name: row.file_name,
      content_type: row.content_type,
      page_count: row.page_count,
    })),
    next_cursor: next,
  };
}
