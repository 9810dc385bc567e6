// Metadata update by external id: a JSON Merge Patch (RFC 7396) applied to the latest version.
import type { Kysely } from 'kysely';
import { errors } from '../errors.js';
import { updateLatestMetadata } from '../store/document-writes.js';
import type { Database } from '../store/schema.js';
import { assertStorableText } from '../text/json-text.js';
import { documentView, type DocumentView } from './views.js';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** RFC 7396: objects merge key by key, `null` removes a key, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const result: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

export async function patchMetadata(
  db: Kysely<Database>,
  workspaceId: number,
  externalId: string,
  patch: Record<string, unknown>,
): Promise<{ status: boolean; data: DocumentView }> {
  assertStorableText(patch, ['metadata']);
  const updated = await updateLatestMetadata(db, workspaceId, externalId, (metadata) => mergePatch(metadata, patch) as Record<string, unknown>);
  if (!updated) throw errors.notFound(`Document with external_id ${externalId}`);
  return { status: true, data: documentView(updated) };
}
