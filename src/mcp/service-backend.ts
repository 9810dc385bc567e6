// The tools' backend inside the server: the services the HTTP routes call, in the
// workspace of the key that authenticated the MCP request.
import { Readable } from 'node:stream';
import type { Services } from '../services.js';
import type { Principal } from '../workspaces/keys.js';
import type { FolioBackend } from './backend.js';

export function serviceBackend(services: Services, principal: Principal, onLlmError: (error: unknown) => void): FolioBackend {
  const { workspaceId } = principal;
  const { documents, ingest, uploads } = services;
  return {
    search: (req) => services.search(workspaceId, req),
    answer: async (req) => (await services.answer(workspaceId, req, onLlmError)).data,
    listDocuments: (req) => documents.list(workspaceId, req),
    getDocument: (id) => documents.get(workspaceId, id),
    getPage: (id) => documents.getPage(workspaceId, id, false),
    ingestUrl: (input) => ingest.acceptUrl(workspaceId, input),
    ingestText: async ({ text, file_name, external_id, metadata }) => {
      // As the upload route does: the file goes to the blob store, then its ingest is queued.
      const upload = await uploads.store(Readable.from([Buffer.from(text)]), file_name, 'text/plain');
      const fields: Record<string, string> = {};
      if (external_id) fields.external_id = external_id;
      if (metadata) fields.metadata = JSON.stringify(metadata);
      return ingest.acceptUpload(workspaceId, upload, fields);
    },
  };
}
