// Workspaces and their API keys (stored as SHA-256 hashes of the key).
import type { Kysely } from 'kysely';
import type { Scope } from '../config.js';
import type { Database } from './schema.js';

/** The workspace's id, creating it when the name is new. */
export async function ensureWorkspace(db: Kysely<Database>, name: string): Promise<number> {
  const inserted = await db
    .insertInto('workspaces')
    .values({ name })
    .onConflict((oc) => oc.column('name').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (inserted) return inserted.id;
  const row = await db.selectFrom('workspaces').select('id').where('name', '=', name).executeTakeFirstOrThrow();
  return row.id;
}

export interface NewKey {
  workspaceId: number;
  keyHash: string;
  prefix: string;
  scope: Scope;
  label: string | null;
}

export async function insertKey(db: Kysely<Database>, key: NewKey): Promise<{ id: number; created_at: Date }> {
  return db
    .insertInto('api_keys')
    .values({ workspace_id: key.workspaceId, key_hash: key.keyHash, key_prefix: key.prefix, scope: key.scope, label: key.label })
    .returning(['id', 'created_at'])
    .executeTakeFirstOrThrow();
}

export interface KeyRow {
  id: number;
  workspace: string;
  scope: Scope;
  prefix: string;
  label: string | null;
  created_at: Date;
  revoked_at: Date | null;
}

/** Every key, or those of one workspace, by id. */
export async function findKeys(db: Kysely<Database>, workspaceId?: number): Promise<KeyRow[]> {
  let query = db
    .selectFrom('api_keys as k')
    .innerJoin('workspaces as w', 'w.id', 'k.workspace_id')
    .select(['k.id', 'w.name', 'k.scope', 'k.key_prefix', 'k.label', 'k.created_at', 'k.revoked_at'])
    .orderBy('k.id');
  if (workspaceId !== undefined) query = query.where('k.workspace_id', '=', workspaceId);
  const rows = await query.execute();
  return rows.map((r) => ({
    id: r.id,
    workspace: r.name,
    scope: r.scope as Scope,
    prefix: r.key_prefix,
    label: r.label,
    created_at: r.created_at,
    revoked_at: r.revoked_at,
  }));
}

/** Revokes the active key with this id or printed prefix (within one workspace when given); returns how many were revoked. */
export async function revokeKeys(db: Kysely<Database>, key: { id: number } | { prefix: string }, workspaceId?: number): Promise<number> {
  let query = db.updateTable('api_keys').set({ revoked_at: new Date() }).where('revoked_at', 'is', null);
  if (workspaceId !== undefined) query = query.where('workspace_id', '=', workspaceId);
  const result = 'id' in key ? await query.where('id', '=', key.id).executeTakeFirst() : await query.where('key_prefix', '=', key.prefix).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export interface ActiveKey {
  id: number;
  keyHash: string;
  scope: Scope;
  workspaceId: number;
  workspace: string;
}

/** The active (not revoked) key with this hash, with its workspace. */
export async function findActiveKey(db: Kysely<Database>, keyHash: string): Promise<ActiveKey | undefined> {
  const row = await db
    .selectFrom('api_keys as k')
    .innerJoin('workspaces as w', 'w.id', 'k.workspace_id')
    .select(['k.id', 'k.key_hash', 'k.scope', 'k.workspace_id', 'w.name'])
    .where('k.key_hash', '=', keyHash)
    .where('k.revoked_at', 'is', null)
    .executeTakeFirst();
  return row && { id: row.id, keyHash: row.key_hash, scope: row.scope as Scope, workspaceId: row.workspace_id, workspace: row.name };
}
