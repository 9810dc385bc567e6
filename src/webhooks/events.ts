// The events webhooks carry and how each is recorded: inside the transaction of the change
// that causes it (a task's completion or failure, a deletion), with one delivery per endpoint
// of the workspace that subscribes to it, so a crash after the commit loses none.
import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Database } from '../store/schema.js';
import { insertEvents, type NewWebhookEvent } from '../store/webhooks.js';

export const WEBHOOK_EVENT_TYPES = ['task.completed', 'task.failed', 'document.deleted'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Task kinds whose completion stores documents: their events carry `document_ids`. */
const INGEST_KINDS = new Set(['IngestFile', 'IngestUrl', 'IngestEmbedding']);

/** A task as it ends: its identifier and kind, and the status body GET /api/v1/tasks/status/{id} returns. */
export interface EndedTask {
  identifier: string;
  kind: string;
  title: string;
  message: string;
  progress: number;
  status: 'COMPLETED' | 'FAILED';
  /** The document the task stored, if any. */
  documentId: number | null;
}

export function taskEvent(workspaceId: number, task: EndedTask): NewWebhookEvent {
  const data: Record<string, unknown> = {
    task_identifier: task.identifier,
    kind: task.kind,
    title: task.title,
    message: task.message,
    progress: task.progress,
    status: task.status,
  };
  if (INGEST_KINDS.has(task.kind)) data.document_ids = task.documentId === null ? [] : [task.documentId];
  const type: WebhookEventType = task.status === 'COMPLETED' ? 'task.completed' : 'task.failed';
  return { id: randomUUID(), workspaceId, type, data };
}

export function documentsDeletedEvent(workspaceId: number, documentIds: number[]): NewWebhookEvent {
  return { id: randomUUID(), workspaceId, type: 'document.deleted', data: { document_ids: documentIds } };
}

/** Records the events in the caller's transaction; returns how many deliveries they created. */
export function recordEvents(trx: Transaction<Database>, events: NewWebhookEvent[]): Promise<number> {
  return insertEvents(trx, events);
}
