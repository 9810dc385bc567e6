// Database failures said by what they mean rather than by PostgreSQL's codes: the request is
// at fault (an invalid regular expression or value, a query too complex to evaluate), or the
// database is unavailable. The HTTP layer maps them; any other error passes unchanged.
import type { PostgresPool, PostgresPoolClient } from 'kysely';

export type StoreErrorKind = 'invalid_regex' | 'invalid_value' | 'too_complex' | 'cancelled' | 'unavailable' | 'connection_failed';

export class StoreError extends Error {
  readonly kind: StoreErrorKind;
  /** The database's own message. */
  readonly detail: string;

  constructor(kind: StoreErrorKind, detail: string, cause: unknown) {
    super(`${kind}: ${detail}`, { cause });
    this.name = 'StoreError';
    this.kind = kind;
    this.detail = detail;
  }
}

function kindOf(code: string | undefined): StoreErrorKind | null {
  switch (code) {
    case '2201B':
      return 'invalid_regex';
    case '22P02':
    case '22P05':
    case '22021':
    case '22003':
    case '22007':
    case '22008':
      return 'invalid_value';
    case '54001':
      return 'too_complex';
    case '57014':
      return 'cancelled';
    case 'ECONNREFUSED':
    case 'ECONNRESET':
    case 'ETIMEDOUT':
    case '53300':
    case '57P01':
    case '57P02':
    case '57P03':
      return 'unavailable';
    default:
      return code?.startsWith('08') ? 'connection_failed' : null;
  }
}

export function toStoreError(error: unknown): unknown {
  if (typeof error !== 'object' || error === null) return error;
  const { code, message } = error as { code?: unknown; message?: unknown };
  const kind = kindOf(typeof code === 'string' ? code : undefined);
  return kind ? new StoreError(kind, typeof message === 'string' ? message : '', error) : error;
}

/**
 * A failure of one of the store's threads itself, not of a statement: given PostgreSQL's code
 * for a failed connection, it is reported as the database being unreachable (503), as a lost
 * server is.
 */
export function threadFailure(message: string, cause?: unknown): Error {
  return Object.assign(new Error(message, { cause }), { code: '08006' });
}

/** `read` with its failures raised as StoreErrors. */
export function raisingStoreErrors<A extends unknown[], R>(read: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args) => {
    try {
      return await read(...args);
    } catch (error) {
      throw toStoreError(error);
    }
  };
}

/** The pool with the failures of its connections and statements raised as StoreErrors. */
export function translatingPool(pool: PostgresPool): PostgresPool {
  return {
    connect: async () => {
      let client: PostgresPoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw toStoreError(error);
      }
      const query = (...args: unknown[]) => {
        const result = (client.query as (...a: unknown[]) => unknown)(...args);
        // A cursor (a streamed query) is returned as is; statements answer a promise.
        return result instanceof Promise ? result.catch((error: unknown) => Promise.reject(toStoreError(error))) : result;
      };
      return { query, release: () => client.release() } as unknown as PostgresPoolClient;
    },
    end: () => pool.end(),
  };
}
