// The console's only way to Folio: typed calls on the public API with the key kept in
// sessionStorage. The types come from api-types.ts (generated from /openapi.json), so a
// renamed path or field breaks `npm run typecheck` rather than the page.
import { FolioClient } from '@folio/client';
import type { paths } from './api-types';

const KEY_ITEM = 'folio.apiKey';

export const session = {
  key: (): string | null => sessionStorage.getItem(KEY_ITEM),
  setKey: (key: string) => sessionStorage.setItem(KEY_ITEM, key),
  clear: () => sessionStorage.removeItem(KEY_ITEM),
};

type Method = 'get' | 'post' | 'patch' | 'delete';
type Op<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type PathsWith<M extends Method> = { [P in keyof paths]: paths[P][M] extends undefined | never ? never : P }[keyof paths];

type JsonContent<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type Success<O> = O extends { responses: infer R }
  ? 200 extends keyof R
    ? JsonContent<R[200]>
    : 201 extends keyof R
      ? JsonContent<R[201]>
      : never
  : never;
type RequestBody<O> = O extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;
type PathParams<O> = O extends { parameters: { path: infer A } } ? A : never;
type QueryParams<O> = O extends { parameters: { query?: infer Q } } ? Q : never;

/** What a successful call answers, by path and method. */
export type Answer<P extends keyof paths, M extends Method> = Success<Op<P, M>>;

export interface Issue {
  loc: string[];
  msg: string;
  type: string;
}

/** A failed call: HTTP errors with Folio's code and message, or the network (status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues: Issue[] = [],
    readonly retryAfter: number | null = null,
  ) {
    super(message);
  }
}

type Listener = (error: ApiError | null) => void;
const listeners = new Set<Listener>();
/** 401 and network failures concern the whole console, not one view: the shell listens, and
 * hears null when a call gets through again. */
export function onGlobalError(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

interface Options<O> {
  path?: PathParams<O>;
  query?: QueryParams<O>;
  body?: RequestBody<O>;
  form?: FormData;
}

function url(template: string, params: object = {}, query: object = {}): string {
  let out = template.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(String((params as Record<string, unknown>)[name])));
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) search.set(k, String(v));
  if ([...search].length > 0) out += `?${search}`;
  return out;
}

async function failure(res: Response): Promise<ApiError> {
  let body: unknown = null;
  try {
    body = await res.json();
  } catch {
    // not JSON: the status says enough
  }
  const b = body as { detail?: Issue[]; error?: { error_code: string; message: string }; error_code?: string; message?: string } | null;
  const retry = res.headers.get('retry-after');
  if (b?.detail) return new ApiError(res.status, 'VALIDATION_ERROR', b.detail.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '), b.detail);
  const err = b?.error ?? (b?.error_code ? { error_code: b.error_code, message: b.message ?? '' } : null);
  return new ApiError(res.status, err?.error_code ?? `HTTP_${res.status}`, err?.message ?? res.statusText, [], retry ? Number(retry) : null);
}

/** Fetches with the session's key; resolves to the raw Response (for files) or throws ApiError. */
export async function send(method: string, target: string, init: { json?: unknown; form?: FormData } = {}): Promise<Response> {
  const headers: Record<string, string> = {};
  let body: BodyInit | undefined;
  if (init.form) body = init.form;
  else if (init.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.json);
  }
  return deliver(new Request(target, { method: method.toUpperCase(), headers, body }));
}

/**
 * The typed client (clients/typescript) for the calls it wraps, such as the listings' cursor
 * iterators: its requests go through `deliver`, so they carry the session's key, reach the
 * shell's 401 and network states, and fail with ApiError as every other call.
 */
export const folio = (): FolioClient => new FolioClient({ baseUrl: location.origin, fetch: deliver });

async function deliver(request: Request): Promise<Response> {
  const key = session.key();
  if (key) request.headers.set('x-api-key', key);
  let res: Response;
  try {
    res = await fetch(request);
  } catch {
    const error = new ApiError(0, 'NETWORK', 'Folio cannot be reached: check the connection or whether the service runs.');
    listeners.forEach((l) => l(error));
    throw error;
  }
  listeners.forEach((l) => l(null));
  if (res.ok) return res;
  const error = await failure(res);
  if (error.status === 401) listeners.forEach((l) => l(error));
  throw error;
}

/** A typed call: the path, its parameters, body and answer are checked against the OpenAPI types. */
export async function call<P extends PathsWith<M>, M extends Method>(method: M, path: P, options: Options<Op<P, M>> = {}): Promise<Answer<P, M>> {
  const res = await send(method, url(path as string, options.path ?? {}, options.query ?? {}), { json: options.body, form: options.form });
  return (await res.json()) as Answer<P, M>;
}
