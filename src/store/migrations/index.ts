// The ordered list of schema migrations; add a file and a line here for each new version.
import type { Migration, MigrationProvider } from 'kysely';
import * as m0001 from './0001_initial.js';
import * as m0002 from './0002_files_and_leases.js';
import * as m0003 from './0003_extractions.js';
import * as m0004 from './0004_search_storage.js';
import * as m0005 from './0005_word_prior.js';
import * as m0006 from './0006_embedding_storage.js';
import * as m0007 from './0007_document_changes.js';
import * as m0008 from './0008_webhooks.js';
import * as m0009 from './0009_sentences_in_paragraphs.js';
import * as m0010 from './0010_no_page_text_index.js';
import * as m0011 from './0011_page_changes_function.js';
import * as m0012 from './0012_embedded_documents_function.js';
import * as m0013 from './0013_page_tsvector_supplied.js';
import * as m0014 from './0014_listing_indexes.js';
import * as m0015 from './0015_superseded_pages_index.js';
import * as m0016 from './0016_paragraph_content_from_sentences.js';
import * as m0017 from './0017_sentences_by_paragraph.js';
import * as m0018 from './0018_page_changes_once.js';
import * as m0019 from './0019_embedded_documents_page_ids.js';

const migrations: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_files_and_leases': m0002,
  '0003_extractions': m0003,
  '0004_search_storage': m0004,
  '0005_word_prior': m0005,
  '0006_embedding_storage': m0006,
  '0007_document_changes': m0007,
  '0008_webhooks': m0008,
  '0009_sentences_in_paragraphs': m0009,
  '0010_no_page_text_index': m0010,
  '0011_page_changes_function': m0011,
  '0012_embedded_documents_function': m0012,
  '0013_page_tsvector_supplied': m0013,
  '0014_listing_indexes': m0014,
  '0015_superseded_pages_index': m0015,
  '0016_paragraph_content_from_sentences': m0016,
  '0017_sentences_by_paragraph': m0017,
  '0018_page_changes_once': m0018,
  '0019_embedded_documents_page_ids': m0019,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
