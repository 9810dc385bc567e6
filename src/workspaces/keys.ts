// Workspaces and API keys: bootstrap keys from FOLIO_API_KEYS, durable keys stored hashed,
// and the lookup that turns an X-API-Key header into a workspace and a scope.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { BootstrapKey, Scope } from '../config.js';
import type { Database } from '../store/schema.js';
import { ensureWorkspace, findActiveKey, findKeys, insertKey, revokeKeys } from '../store/workspaces.js';

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

export async function createKey(
  db: Kysely<Database>,
  workspace: string,
  scope: Scope,
  label: string | null = null,
): Promise<{ key: string; summary: KeySummary }> {
  const key = `folio_${randomBytes(32).toString('base64url')}`;
  const workspaceId = await ensureWorkspace(db, workspace);
  const prefix = key.slice(0, 12);
  const row = await insertKey(db, { workspaceId, keyHash: hashKey(key), prefix, scope, label });
  return {
    key,
    summary: { id: row.id, workspace, scope, prefix, label, created_at: row.created_at.toISOString(), revoked_at: null },
  };
}

/** Every key, or those of one workspace. */
export async function listKeys(db: Kysely<Database>, workspaceId?: number): Promise<KeySummary[]> {
  const rows = await findKeys(db, workspaceId);
  return rows.map((r) => ({ ...r, created_at: r.created_at.toISOString(), revoked_at: r.revoked_at ? r.revoked_at.toISOString() : null }));
}

/** Revokes by numeric id or by the printed prefix (within one workspace when given); returns how many keys were revoked. */
export async function revokeKey(db: Kysely<Database>, idOrPrefix: string, workspaceId?: number): Promise<number> {
  return revokeKeys(db, /^\d+$/.test(idOrPrefix) ? { id: Number(idOrPrefix) } : { prefix: idOrPrefix }, workspaceId);
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
    const row = await findActiveKey(this.db, hash);
    const principal =
      row && timingSafeEqual(Buffer.from(row.keyHash), Buffer.from(hash))
        ? { keyId: `key:${row.id}`, workspaceId: row.workspaceId, workspace: row.workspace, scope: row.scope }
        : null;
    if (this.cache.size > 10000) this.cache.clear();
    this.cache.set(hash, { principal, expires: now + (principal ? this.cacheMs : 1000) });
    return principal;
  }
}
