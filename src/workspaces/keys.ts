// Workspaces and API keys: bootstrap keys from FOLIO_API_KEYS, durable keys stored hashed,
// and the lookup that turns an X-API-Key header into a workspace and a scope.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { BootstrapKey, Scope } from '../config.js';
import type { Database } from '../store/schema.js';

export interface Principal {
  /** Stable id of the key, safe to log and to count requests by. */
  keyId: string;
  workspaceId: number;
  workspace: string;
  scope: Scope;
}

export interface KeySummary {
  id: number;
  workspace: string;
  scope: Scope;
  prefix: string;
  label: string | null;
  created_at: string;
  revoked_at: string | null;
}

const SCOPE_RANK: Record<Scope, number> = { read: 1, write: 2, admin: 3 };

export function scopeAllows(held: Scope, needed: Scope): boolean {
  return SCOPE_RANK[held] >= SCOPE_RANK[needed];
}

// Keys are 256 random bits, so a plain SHA-256 is a safe verifier (no salt or KDF needed).
export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

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

export async function createKey(
  db: Kysely<Database>,
  workspace: string,
  scope: Scope,
  label: string | null = null,
): Promise<{ key: string; summary: KeySummary }> {
  const key = `folio_${randomBytes(32).toString('base64url')}`;
  const workspaceId = await ensureWorkspace(db, workspace);
  const row = await db
    .insertInto('api_keys')
    .values({ workspace_id: workspaceId, key_hash: hashKey(key), key_prefix: key.slice(0, 12), scope, label })
    .returning(['id', 'created_at'])
    .executeTakeFirstOrThrow();
  return {
    key,
    summary: {
      id: row.id,
      workspace,
      scope,
      prefix: key.slice(0, 12),
      label,
      created_at: row.created_at.toISOString(),
      revoked_at: null,
    },
  };
}

/** Every key, or those of one workspace. */
export async function listKeys(db: Kysely<Database>, workspaceId?: number): Promise<KeySummary[]> {
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
    created_at: r.created_at.toISOString(),
    revoked_at: r.revoked_at ? r.revoked_at.toISOString() : null,
  }));
}

/** Revokes by numeric id or by the printed prefix (within one workspace when given); returns how many keys were revoked. */
export async function revokeKey(db: Kysely<Database>, idOrPrefix: string, workspaceId?: number): Promise<number> {
  let query = db.updateTable('api_keys').set({ revoked_at: new Date() }).where('revoked_at', 'is', null);
  if (workspaceId !== undefined) query = query.where('workspace_id', '=', workspaceId);
  const result = /^\d+$/.test(idOrPrefix)
    ? await query.where('id', '=', Number(idOrPrefix)).executeTakeFirst()
    : await query.where('key_prefix', '=', idOrPrefix).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

interface CachedPrincipal {
  principal: Principal | null;
  expires: number;
}

/**
 * Resolves keys: bootstrap keys from the environment first, then durable keys from the
 * store, cached briefly so that a request does not always cost a query (a revoked key
 * stops working within the cache lifetime).
 */
export class KeyResolver {
  private readonly bootstrap = new Map<string, Principal>();
  private readonly cache = new Map<string, CachedPrincipal>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly cacheMs = 5000,
  ) {}

  async loadBootstrapKeys(keys: BootstrapKey[]): Promise<void> {
    for (const k of keys) {
      const workspaceId = await ensureWorkspace(this.db, k.workspace);
      const hash = hashKey(k.key);
      this.bootstrap.set(hash, { keyId: `env:${hash.slice(0, 16)}`, workspaceId, workspace: k.workspace, scope: k.scope });
    }
  }

  /** Forgets cached lookups, so that a revocation made here takes effect at once. */
  clearCache(): void {
    this.cache.clear();
  }

  async resolve(key: string): Promise<Principal | null> {
    const hash = hashKey(key);
    const fromEnv = this.bootstrap.get(hash);
    if (fromEnv) return fromEnv;
    const now = Date.now();
    const cached = this.cache.get(hash);
    if (cached && cached.expires > now) return cached.principal;
    const row = await this.db
      .selectFrom('api_keys as k')
      .innerJoin('workspaces as w', 'w.id', 'k.workspace_id')
      .select(['k.id', 'k.key_hash', 'k.scope', 'k.workspace_id', 'w.name'])
      .where('k.key_hash', '=', hash)
      .where('k.revoked_at', 'is', null)
      .executeTakeFirst();
    const principal =
      row && timingSafeEqual(Buffer.from(row.key_hash), Buffer.from(hash))
        ? { keyId: `key:${row.id}`, workspaceId: row.workspace_id, workspace: row.name, scope: row.scope as Scope }
        : null;
    if (this.cache.size > 10000) this.cache.clear();
    this.cache.set(hash, { principal, expires: now + (principal ? this.cacheMs : 1000) });
    return principal;
  }
}
