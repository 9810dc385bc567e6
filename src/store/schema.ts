// Table row types for the typed query builder. Mirrors the migrations in ./migrations.
import type { ColumnType, Generated, RawBuilder, Transaction } from 'kysely';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type UpdatedAt = ColumnType<Date, Date | string | undefined, Date | string>;

export interface WorkspacesTable {
  id: Generated<number>;
  name: string;
  created_at: CreatedAt;
}

export interface ApiKeysTable {
  id: Generated<number>;
  workspace_id: number;
  key_hash: string;
  key_prefix: string;
  scope: string;
  label: string | null;
  created_at: CreatedAt;
  revoked_at: ColumnType<Date | null, never, Date | string | null>;
}

export interface DocumentsTable {
  id: Generated<number>;
  workspace_id: number;
  external_id: string | null;
  file_path: string;
  file_url: string | null;
  metadata: ColumnType<Record<string, unknown>, string, string>;
  source: string;
  task_identifier: string | null;
  file_name: string | null;
  content_type: string | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
  // Set by the database on insert and on update (migration 0007); read by the change feed.
  txid: ColumnType<string | null, never, never>;
}

export interface PagesTable {
  id: Generated<number>;
  document_id: number;
  workspace_id: number;
  page_number: number;
  content: string;
  // Written in tsvector's binary form (node-postgres sends a Buffer as binary), or computed by a
  // trigger when null (migration 0013); read as text.
  tsv: ColumnType<string, Buffer | null, never>;
  embedding: Buffer | null;
  embedding_model: string | null;
  change_seq: ColumnType<number, never, never>;
  txid: ColumnType<string, never, never>;
  // Timestamp without zone; returned as the raw string (see store/engine.ts).
  created_at: ColumnType<string, never, never>;
}

export interface PageTombstonesTable {
  page_id: number;
  workspace_id: number;
  change_seq: ColumnType<number, never, never>;
  txid: ColumnType<string, never, never>;
}

export interface ParagraphsTable {
  id: Generated<number>;
  page_id: number;
  paragraph_index: number;
  /** Null when it is the sentences joined by single spaces (paragraph-content.ts). */
  content: string | null;
  /** The paragraph's sentences in order, and their ids (same length). */
  sentences: string[];
  sentence_ids: ColumnType<string[], RawBuilder<unknown>, never>;
  created_at: ColumnType<Date, never, never>;
}

export interface TasksTable {
  identifier: string;
  workspace_id: number;
  kind: string;
  status: string;
  progress: number;
  title: string;
  message: string;
  payload: ColumnType<Record<string, unknown>, string, string>;
  document_id: number | null;
  attempts: ColumnType<number, number | undefined, number>;
  run_after: ColumnType<Date, Date | string | undefined, Date | string>;
  lease_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  worker_id: string | null;
  max_attempts: ColumnType<number, number | undefined, number>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface ExtractionsTable {
  id: Generated<number>;
  workspace_id: number;
  name: string;
  description: string | null;
  schema: ColumnType<Record<string, unknown>, string, string>;
  multiple: boolean;
  created_at: CreatedAt;
}

export interface ExtractionDocumentsTable {
  id: Generated<number>;
  workspace_id: number;
  extraction_id: number;
  task_identifier: string;
  source: string;
  document_id: number | null;
  file_path: string;
  file_url: string | null;
  file_name: string | null;
  content_type: string | null;
  title: string | null;
  pages: ColumnType<string[], string, string>;
  created_at: CreatedAt;
}

export interface ExtractionResultsTable {
  id: Generated<number>;
  workspace_id: number;
  extraction_id: number;
  extraction_document_id: number;
  task_identifier: string;
  results: ColumnType<Record<string, unknown>[], string, string>;
  engine: string;
  created_at: CreatedAt;
}

export interface WebhooksTable {
  id: Generated<number>;
  workspace_id: number;
  url: string;
  events: string[];
  description: string | null;
  secret: string;
  created_at: CreatedAt;
  last_success_at: Date | null;
  failing_since: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
}

export interface WebhookEventsTable {
  id: string;
  workspace_id: number;
  type: string;
  data: ColumnType<Record<string, unknown>, string, string>;
  created_at: CreatedAt;
}

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  webhook_id: number;
  event_id: string;
  status: string;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  claimed_by: string | null;
  last_status_code: number | null;
  last_duration_ms: number | null;
  last_error: string | null;
  last_attempt_at: Date | null;
  created_at: CreatedAt;
}

export interface WebhookAttemptsTable {
  delivery_id: number;
  attempt: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  attempted_at: CreatedAt;
}

/** The fixed word-frequency prior of keyword ranking (migration 0005). */
export interface WordPriorTable {
  lexeme: string;
  frequency: number;
}

export interface Database {
  workspaces: WorkspacesTable;
  api_keys: ApiKeysTable;
  documents: DocumentsTable;
  pages: PagesTable;
  page_tombstones: PageTombstonesTable;
  paragraphs: ParagraphsTable;
  tasks: TasksTable;
  extractions: ExtractionsTable;
  extraction_documents: ExtractionDocumentsTable;
  extraction_results: ExtractionResultsTable;
  word_prior: WordPriorTable;
  webhooks: WebhooksTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}

/** What a caller adds to a repository's transaction (the events of a change), given its result. */
export type AlsoWrite<R> = (trx: Transaction<Database>, result: R) => Promise<unknown>;
