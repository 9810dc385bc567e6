// What the MCP tools call: the service functions the HTTP routes call, for one API key. In
// the server (/mcp) they are the services themselves; `folio mcp` reaches a running Folio's
// routes through the typed client. Both give the routes' shapes.
import type { AnswerData, AnswerRequest } from '../answer/answer.js';
import type { DocumentList, DocumentListRequest } from '../documents/listing.js';
import type { DocumentWithPagesView, PageView } from '../documents/views.js';
import type { IngestReceipt, UrlIngestInput } from '../ingest/accept.js';
import type { SearchRequest, SearchResponse } from '../search/search.js';

export interface TextIngestInput {
  text: string;
  file_name: string;
  external_id?: string | null;
  metadata?: Record<string, unknown> | null;
}

export interface FolioBackend {
  search(req: SearchRequest): Promise<SearchResponse>;
  answer(req: AnswerRequest): Promise<Pick<AnswerData, 'answer' | 'sources'>>;
  listDocuments(req: DocumentListRequest): Promise<DocumentList>;
  getDocument(id: number): Promise<DocumentWithPagesView>;
  getPage(id: number): Promise<PageView>;
  ingestUrl(input: UrlIngestInput): Promise<IngestReceipt>;
  /** Stores the text as an uploaded text file; the document exists once its task completes. */
  ingestText(input: TextIngestInput): Promise<IngestReceipt>;
}
