// Key management for a workspace's admin over HTTP: the embedded engine's data dir is
// locked while the server runs, so the CLI cannot be used then.
import type { Kysely } from 'kysely';
import type { Scope } from '../config.js';
import { errors } from '../errors.js';
import type { Database } from '../store/schema.js';
import type { Principal } from './keys.js';
import { createKey, listKeys, revokeKey, type KeySummary } from './keys.js';

export async function issueKey(
  db: Kysely<Database>,
  admin: Principal,
  scope: Scope,
  label: string | null,
): Promise<KeySummary & { key: string }> {
  const { key, summary } = await createKey(db, admin.workspace, scope, label);
  return { ...summary, key };
}

export async function workspaceKeys(db: Kysely<Database>, admin: Principal): Promise<KeySummary[]> {
  return listKeys(db, admin.workspaceId);
}

export async function revokeWorkspaceKey(db: Kysely<Database>, admin: Principal, id: number): Promise<{ revoked: number }> {
  const revoked = await revokeKey(db, String(id), admin.workspaceId);
  if (revoked === 0) throw errors.notFound(`Active key ${id}`);
  return { revoked };
}
