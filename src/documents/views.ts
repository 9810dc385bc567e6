// The public shapes of documents, pages, paragraphs and sentences, built from store rows.
import type { DocumentRow, PageRow, ParagraphRow, SentenceRow } from '../store/documents.js';

export interface DocumentView {
  id: number;
  created_at: string;
  updated_at: string;
  external_id: string | null;
  file_path: string;
  file_url: string | null;
  document_metadata: Record<string, unknown>;
  pages?: PageSummary[];
}

/** A page of a document; its id leads to its paragraphs and sentences (GET /documents/content/pages/{id}). */
export type PageSummary = { id: number; content: string; page_number: number };

export interface DocumentWithPagesView extends DocumentView {
  pages: PageSummary[];
}

export interface SentenceView {
  id: number;
  paragraph_id: number;
  sentence_index: number;
  content: string;
  created_at: string;
}

export interface ParagraphView {
  id: number;
  page_id: number;
  paragraph_index: number;
  content: string;
  created_at: string;
  sentences: SentenceView[];
}

export interface PageView {
  id: number;
  document_id: number;
  page_number: number;
  content: string;
  created_at: string;
  paragraphs?: ParagraphView[];
}

/** Where the original can be fetched: the source URL of URL ingests, else our file endpoint. */
function fileUrl(row: DocumentRow): string | null {
  if (row.file_url) return row.file_url;
  return row.source === 'embedding' ? null : `/api/v1/documents/internal/${row.id}/file`;
}

export function documentView(row: DocumentRow): DocumentView;
export function documentView(row: DocumentRow, pages: PageSummary[]): DocumentWithPagesView;
export function documentView(row: DocumentRow, pages?: PageSummary[]): DocumentView {
  const view: DocumentView = {
    id: row.id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    external_id: row.external_id,
    file_path: row.file_path,
    file_url: fileUrl(row),
    document_metadata: row.metadata,
  };
  if (pages) view.pages = pages;
  return view;
}

/** The spec gives page times without a zone suffix; they are UTC. */
export function pageTimestamp(stored: string): string {
  return stored.replace(' ', 'T');
}

export function pageView(row: PageRow, paragraphs?: ParagraphView[]): PageView {
  const view: PageView = {
    id: row.id,
    document_id: row.document_id,
    page_number: row.page_number,
    content: row.content,
    created_at: pageTimestamp(row.created_at),
  };
  if (paragraphs) view.paragraphs = paragraphs;
  return view;
}

export function sentenceView(row: SentenceRow): SentenceView {
  return {
    id: row.id,
    paragraph_id: row.paragraph_id,
    sentence_index: row.sentence_index,
    content: row.content,
    created_at: row.created_at.toISOString(),
  };
}

export function paragraphView(row: ParagraphRow): ParagraphView {
  return {
    id: row.id,
    page_id: row.page_id,
    paragraph_index: row.paragraph_index,
    content: row.content,
    created_at: row.created_at.toISOString(),
    sentences: row.sentences.map(sentenceView),
  };
}
