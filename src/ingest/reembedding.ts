// Embedding again, in the background, the pages stored with the superseded offline model
// (store/embedding-models.ts) once the offline embedder is the current one: one task per
// workspace, a few documents at a time, with its progress. Searches meanwhile score those
// pages with a query embedded by their own model (search/page-index.ts), so no query ranks
// pages of two models with one embedding.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { HASHING_V2_MODEL, type EmbeddingProvider } from '../providers/embeddings/index.js';
import {
  countSupersededDocuments,
  replaceEmbeddings,
  SUPERSEDED_EMBEDDING_MODEL,
  supersededPages,
  workspacesWithSupersededPages,
} from '../store/reembedding.js';
import type { Database } from '../store/schema.js';
import { workspacesWithUnfinishedTasks } from '../store/tasks.js';
import { bindTask, defineTask, enqueueTask, type BoundTask } from '../tasks/registry.js';
import { EMBED_CHARS } from './pipeline.js';

export interface ReembedDeps {
  db: Kysely<Database>;
  embedder: EmbeddingProvider;
}

/** Documents embedded again per round: each round is one transaction, so a document changes model whole. */
const DOCUMENTS_PER_ROUND = 20;

export const reembedPagesTask = defineTask({
  kind: 'ReembedPages',
  payload: Type.Object({}),
  run: async (ctx, deps: ReembedDeps) => {
    const workspaceId = ctx.task.workspace_id;
    const total = await countSupersededDocuments(deps.db, workspaceId);
    let done = 0;
    for (;;) {
      ctx.signal.throwIfAborted();
      const pages = await supersededPages(deps.db, workspaceId, DOCUMENTS_PER_ROUND);
      if (pages.length === 0) break;
      const vectors = await deps.embedder.embed(
        pages.map((p) => p.content.slice(0, EMBED_CHARS)),
        ctx.signal,
      );
      await replaceEmbeddings(
        deps.db,
        pages.map((p, i) => ({ id: p.id, embedding: vectors[i].some((x) => x !== 0) ? vectors[i] : null })),
        deps.embedder.model,
      );
      done += new Set(pages.map((p) => p.documentId)).size;
      const of = Math.max(total, done);
      await ctx.progress(Math.min(99, Math.floor((100 * done) / of)), `Embedded ${done} of ${of} documents again`);
      // The offline embedder computes on this thread: let requests in between rounds.
      await nextTurn();
    }
    await ctx.commit(async () => ({ documentId: null, message: `Embedded ${done} documents again with ${deps.embedder.model}`, result: undefined }));
  },
});

export function reembedTasks(deps: ReembedDeps): BoundTask[] {
  return [bindTask(reembedPagesTask, deps)];
}

/**
 * Queues a re-embedding task for every workspace holding pages of the superseded model that has
 * none under way, when the current embedder is the offline one (a configured embedding server
 * is left alone: embedding every page again there costs the user; those pages keep being
 * scored with a query of their own model). Returns the tasks' identifiers.
 */
export async function scheduleReembedding(db: Kysely<Database>, embedder: Pick<EmbeddingProvider, 'model'>): Promise<string[]> {
  if (embedder.model !== HASHING_V2_MODEL) return [];
  const workspaces = await workspacesWithSupersededPages(db);
  if (workspaces.length === 0) return [];
  const busy = await workspacesWithUnfinishedTasks(db, reembedPagesTask.kind);
  const queued: string[] = [];
  for (const workspaceId of workspaces.filter((w) => !busy.has(w))) {
    queued.push(
      await enqueueTask(db, reembedPagesTask, {
        workspaceId,
        title: `Embed the pages of ${SUPERSEDED_EMBEDDING_MODEL} again with ${embedder.model}`,
        payload: {},
      }),
    );
  }
  return queued;
}
