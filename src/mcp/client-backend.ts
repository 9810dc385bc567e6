// The tools' backend of `folio mcp`: a running Folio's HTTP API through the typed client,
// with the key given to the bridge. The routes answer what the services answer.
import type { FolioClient } from '@folio/client';
import type { FolioBackend } from './backend.js';

/** The client's query form of a listing request: filter objects stay objects, ids a list. */
type ListQuery = Parameters<FolioClient['listDocuments']>[0];

export function clientBackend(client: FolioClient): FolioBackend {
  return {
    search: (req) => client.search(req as Parameters<FolioClient['search']>[0]),
    answer: (req) => client.answer(req as Parameters<FolioClient['answer']>[0]),
    listDocuments: (req) => client.listDocuments(req as ListQuery) as ReturnType<FolioBackend['listDocuments']>,
    getDocument: (id) => client.getDocument(id),
    getPage: (id) => client.getPage(id),
    ingestUrl: ({ url, external_id, metadata }) => client.ingestUrl(url, { externalId: external_id ?? undefined, metadata: metadata ?? undefined }),
    ingestText: ({ text, file_name, external_id, metadata }) =>
      client.upload({ data: text, name: file_name, type: 'text/plain' }, { externalId: external_id ?? undefined, metadata: metadata ?? undefined }),
  };
}
