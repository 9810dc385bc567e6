// Generators of malformed requests over the routes of /openapi.json (fast-check), and the
// check of an answer against the documented shapes. Used by the fuzz test and bench/abuse.
import fc from 'fast-check';
import { KEYS, vector } from './app.js';

export interface Route {
  method: string;
  path: string;
  params: string[];
  /** Errors in the envelope, or as the bare service error. */
  envelope: boolean;
  json: boolean;
  multipart: boolean;
}

export interface MalformedRequest {
  method: string;
  url: string;
  key: string | null;
  headers: Record<string, string>;
  payload?: string | Buffer;
  route: Route;
}

// Strings PostgreSQL cannot store as text: rare, so that most requests get past the door.
const unstorable = fc.constantFrom('\u0000', 'a\u0000b', '\ud800', 'x\udfffy');

const odd = fc.constantFrom(
  '',
  ' ',
  '💩',
  'x'.repeat(5000),
  '$regex',
  '$and',
  '__proto__',
  'constructor',
  '../../etc/passwd',
  "'; DROP TABLE documents; --",
  '2024-02-30T25:61:61',
  '9'.repeat(40),
);

const nasty = fc.oneof({ weight: 5, arbitrary: odd }, { weight: 1, arbitrary: unstorable });

const number = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, -1, 1e308, -1e308, 5e-324, 2 ** 53, 2 ** 64, 1.5),
);

const scalar = fc.oneof(
  { weight: 6, arbitrary: odd },
  { weight: 6, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 4, arbitrary: number },
  { weight: 2, arbitrary: fc.boolean() },
  { weight: 2, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: unstorable },
);
const key = fc.oneof({ weight: 10, arbitrary: fc.string({ maxLength: 8 }) }, { weight: 4, arbitrary: odd }, { weight: 1, arbitrary: unstorable });

const value: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(key, tie('value'), { maxKeys: 4 }),
  ),
})).value;

const OPERATORS = ['$eq', '$ne', '$gt', '$lt', '$gte', '$lte', '$in', '$nin', '$contains', '$containsAny', '$notContains', '$size', '$type', '$regex', '$iregex', '$and', '$or', '$not', '$bogus'];
const PATTERNS = ['a{1,255}a{1,255}a{1,255}a{1,255}a{1,255}', '(?=a*c)', '(a+)+', '(a)\\1', '[', '\\', '(?i)^x', '.*', 'a{2', '[[:alpha:]]+'];

const filter: fc.Arbitrary<unknown> = fc.letrec<{ filter: unknown; operand: unknown }>((tie) => ({
  filter: fc.oneof(
    { depthSize: 'small' },
    { weight: 6, arbitrary: fc.dictionary(fc.oneof({ weight: 4, arbitrary: fc.constantFrom('k', 'a.b', 'n', 'tags', '', 'a..b', '0') }, { weight: 1, arbitrary: key }), tie('operand'), { maxKeys: 3 }) },
    { weight: 1, arbitrary: fc.record({ $and: fc.oneof(fc.array(tie('filter'), { maxLength: 3 }), value) }) },
    { weight: 1, arbitrary: fc.record({ $or: fc.oneof(fc.array(tie('filter'), { maxLength: 3 }), value) }) },
    { weight: 1, arbitrary: fc.record({ $not: fc.oneof(tie('filter'), value) }) },
    { weight: 1, arbitrary: value },
  ),
  operand: fc.oneof(
    { depthSize: 'small' },
    scalar,
    fc.dictionary(fc.constantFrom(...OPERATORS), fc.oneof(value, fc.constantFrom(...PATTERNS), tie('operand')), { minKeys: 1, maxKeys: 2 }),
    tie('filter'),
  ),
})).filter;

const dateFilter = fc.oneof(
  { weight: 4, arbitrary: fc.dictionary(fc.constantFrom('$eq', '$ne', '$gt', '$lt', '$gte', '$lte', '$in', '$nin', '$regex'), fc.oneof(fc.constantFrom('2024-01-01', '2024-01-01T00:00:00', '0000-01-01', '2024-13-45', '99999-01-01', '2024-01-01T00:00:00+99:00'), value), { maxKeys: 2 }) },
  { weight: 1, arbitrary: value },
);

const embedding = fc.oneof(
  fc.constant(vector(7)),
  fc.constant(vector(7, 1535)),
  fc.constant([...vector(7, 1535), 'x']),
  fc.constant(new Array(1536).fill(0)),
  fc.constant(new Array(1536).fill(1e308)),
  value,
);

const unit = fc.double({ min: 0, max: 1, noNaN: true });
const text = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('hello world', 'the of and', '"quoted" -not OR', '!!! & | :*', 'a', 'x'.repeat(5000)) },
  { weight: 1, arbitrary: nasty },
  { weight: 1, arbitrary: fc.string({ minLength: 1 }) },
);
const metadata = fc.dictionary(key, value, { maxKeys: 4 });

// A search or question whose filter alone is generated: the filter compiler's share.
const filterOnly = (field: string) =>
  fc.record({ text: fc.constantFrom('hello world', 'fuzz seed'), alpha: fc.constantFrom(0, 0.5, 1), metadata_filter: filter }).map(({ text: t, alpha, metadata_filter }) =>
    field === 'query' ? { query: t, alpha, metadata_filter } : { question: t, metadata_filter },
  );

/**
 * A body for each JSON route that passes validation but for its free-form parts (filters,
 * metadata, text), so most requests reach the services; `mutated` then breaks one field.
 */
const embeddingBody = fc.record({ embedding, content: fc.oneof(fc.string({ maxLength: 100 }), nasty), metadata, external_id: text }, { requiredKeys: ['embedding', 'content'] });

function validBody(route: Route): fc.Arbitrary<Record<string, unknown>> {
  switch (`${route.method} ${route.path}`) {
    case 'POST /api/v1/documents/ingest/embedding':
      return embeddingBody;
    case 'POST /api/v1/documents/ingest/embedding/batch':
      // Items are answered one by one: broken ones (mutated, or any value) beside good ones.
      return fc.record({ documents: fc.array(fc.oneof({ weight: 4, arbitrary: embeddingBody }, { weight: 1, arbitrary: value }), { minLength: 1, maxLength: 4 }) });
    case 'POST /api/v1/documents/search/pages':
      return fc.oneof(filterOnly('query'), fc.record(
        {
          query: text,
          alpha: unit,
          top_k: fc.integer({ min: 1, max: 1000 }),
          min_relevance: unit,
          metadata_filter: filter,
          created_at_filter: dateFilter,
          updated_at_filter: dateFilter,
          optimize_query: fc.boolean(),
          optimize_metadata: fc.boolean(),
        },
        { requiredKeys: ['query'] },
      ));
    case 'POST /api/v1/documents/answer':
      return fc.oneof(filterOnly('question'), fc.record(
        {
          question: text,
          format: fc.constantFrom('MARKDOWN', 'PLAIN_TEXT'),
          top_k: fc.integer({ min: 1, max: 50 }),
          metadata_filter: filter,
          created_at_filter: dateFilter,
          updated_at_filter: dateFilter,
          optimize_metadata: fc.boolean(),
          optimize_question: fc.boolean(),
        },
        { requiredKeys: ['question'] },
      ));
    case 'POST /api/v1/documents/delete/preview':
      return fc.record({ metadata_filter: filter, created_at_filter: dateFilter, updated_at_filter: dateFilter }, { requiredKeys: [] });
    case 'PATCH /api/v1/documents/external/{external_id}/metadata':
      return fc.record({ metadata });
    case 'POST /api/v1/documents/ingest/url':
      return fc.record({ url: fc.oneof(fc.constantFrom('http://127.0.0.1:1/x', 'http://169.254.169.254/', 'file:///etc/passwd', 'ftp://x', 'http://[::1]/', 'http://%00/'), nasty), external_id: text, metadata }, { requiredKeys: ['url'] });
    case 'POST /api/v1/extractions/run/url':
      return fc.record({ extraction_id: fc.constantFrom(1, 2, 2 ** 53 - 1), url: fc.oneof(fc.constantFrom('http://127.0.0.1:1/x', 'gopher://x'), nasty) });
    case 'POST /api/v1/extractions':
      return fc.record(
        {
          name: text,
          description: fc.string(),
          schema: fc.oneof(
            fc.record({
              type: fc.constantFrom('object', 'array', 'x'),
              properties: fc.dictionary(key, fc.oneof(fc.record({ type: fc.constantFrom('string', 'number', 'integer', 'boolean', 'array', 'object', 'date'), description: fc.string() }), value), { maxKeys: 3 }),
            }),
            metadata,
          ),
          multiple: fc.boolean(),
        },
        { requiredKeys: ['name', 'schema'] },
      );
    case 'POST /api/v1/extractions/run/document':
      return fc.record({ extraction_id: fc.constantFrom(1, 2), document_id: fc.constantFrom(1, 2, 3) });
    case 'POST /api/v1/webhooks':
      // Addresses the guard refuses without a DNS lookup: nothing is created, nothing resolved.
      return fc.record(
        {
          url: fc.oneof(fc.constantFrom('http://127.0.0.1:1/x', 'http://169.254.169.254/', 'http://10.0.0.1/h', 'ftp://x', 'http://[::1]/', 'http://%00/'), nasty),
          events: fc.oneof(fc.constant(['task.completed']), fc.array(fc.oneof(fc.constantFrom('task.completed', 'task.failed', 'document.deleted'), nasty), { maxLength: 5 })),
          description: fc.oneof(fc.string(), nasty),
        },
        { requiredKeys: ['url', 'events'] },
      );
    case 'POST /api/v1/keys':
      return fc.record({ scope: fc.constantFrom('read', 'write', 'admin'), label: fc.oneof(fc.string(), nasty) }, { requiredKeys: ['scope'] });
    default:
      return metadata;
  }
}

function mutated(route: Route): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 3, arbitrary: validBody(route) },
    {
      weight: 2,
      arbitrary: fc.tuple(validBody(route), fc.oneof(fc.string({ maxLength: 15 }), fc.constantFrom('query', 'embedding', 'metadata', 'top_k', 'alpha', 'scope', 'label', 'url')), value).map(([body, key, v]) => ({ ...body, [key]: v })),
    },
    { weight: 1, arbitrary: value },
  );
}

const deepJson = fc.integer({ min: 60, max: 60000 }).chain((n) =>
  fc.constantFrom('['.repeat(n) + ']'.repeat(n), '{"metadata":' + '{"a":'.repeat(n) + '1' + '}'.repeat(n + 1), '{"metadata":' + '['.repeat(n)),
);

const malformedJson = fc.oneof(
  fc.constantFrom('{', '{"a":', 'null', '[]', '"x"', '1', 'true', '{"a":1}{', '\u0000', '{"a":"\\u0000"}', '{"a":"\\ud800"}', '{"__proto__":{"x":1}}', ''),
  fc.string({ maxLength: 50 }),
  deepJson,
);

const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'multipart/form-data; boundary=',
  'application/octet-stream',
  'application/json, text/plain',
);

function jsonBody(route: Route): fc.Arbitrary<{ payload: string; type: string }> {
  return fc.oneof(
    { weight: 8, arbitrary: mutated(route).map((body) => ({ payload: JSON.stringify(body) ?? 'null', type: 'application/json' })) },
    { weight: 2, arbitrary: malformedJson.map((payload) => ({ payload, type: 'application/json' })) },
    { weight: 1, arbitrary: fc.tuple(validBody(route), contentType).map(([body, type]) => ({ payload: JSON.stringify(body), type })) },
  );
}

const fileBytes = fc.oneof(
  fc.uint8Array({ maxLength: 2000 }).map((b) => Buffer.from(b)),
  fc.constantFrom('%PDF-1.7\n garbage', 'PK\u0003\u0004garbage', '\u0089PNG\r\n\u001a\nxx', 'hello world\n', '', '<html><body>hi</body></html>').map((s) => Buffer.from(s, 'latin1')),
);

// A form with a file part and text fields, then sometimes broken: another boundary, cut short.
const multipart = fc
  .record({
    boundary: fc.constantFrom('XyZ', 'a'.repeat(70), '----folio', 'b'.repeat(300)),
    fields: fc.dictionary(fc.constantFrom('external_id', 'metadata', 'extraction_id', 'other', 'file'), fc.oneof(fc.string(), nasty, value.map((v) => JSON.stringify(v) ?? '')), { maxKeys: 3 }),
    file: fc.option(fc.record({ name: fc.constantFrom('file', 'other'), filename: fc.oneof(fc.constantFrom('a.pdf', 'a.docx', 'a.txt', 'a.png', ''), nasty), type: fc.oneof(contentType, fc.constantFrom('application/pdf', 'image/png')), data: fileBytes })),
    breakage: fc.constantFrom('none', 'none', 'boundary', 'truncate', 'no-header-boundary', 'garbage'),
    cut: fc.nat(),
  })
  .map(({ boundary, fields, file, breakage, cut }) => {
    const parts: Buffer[] = [];
    for (const [name, v] of Object.entries(fields)) {
      parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${v}\r\n`));
    }
    if (file) {
      parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${file.name}"; filename="${file.filename}"\r\nContent-Type: ${file.type}\r\n\r\n`), file.data, Buffer.from('\r\n'));
    }
    parts.push(Buffer.from(`--${boundary}--\r\n`));
    let payload = Buffer.concat(parts);
    let type = `multipart/form-data; boundary=${boundary}`;
    if (breakage === 'boundary') type = 'multipart/form-data; boundary=other';
    if (breakage === 'truncate') payload = payload.subarray(0, cut % Math.max(1, payload.length));
    if (breakage === 'no-header-boundary') type = 'multipart/form-data';
    if (breakage === 'garbage') payload = Buffer.from('garbage');
    return { payload, type };
  });

const pathValue = fc.oneof(
  fc.constantFrom('1', '2', '999999', 'e1', 'IngestFile:00000000-0000-0000-0000-000000000000', 'RunExtraction:x'),
  fc.constantFrom('%00', '1%00', '%ff', '%C0%AE', '%', '%%', '..%2f..%2f', 'a'.repeat(5000), '-1', '1.5', '1e3', '9'.repeat(40), '0x10', '%E2%82', '%F0%9F%92%A9'),
  fc.oneof(nasty, fc.string({ maxLength: 30 })).map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '?'))),
);

const query = fc.oneof(
  fc.constant(''),
  fc.dictionary(fc.constantFrom('latest_only', 'include_paragraphs', 'limit', 'offset', 'x'), fc.constantFrom('true', 'false', '1', '', 'yes', '%00', '-1', '99999999999999999999', 'a%ff')).map((q) =>
    Object.keys(q).length === 0 ? '' : '?' + Object.entries(q).map(([k, v]) => `${k}=${v}`).join('&'),
  ),
);

const keyFor = (route: Route) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constant(/^\/api\/v1\/(keys|webhooks)/.test(route.path) ? KEYS.admin : KEYS.write) },
    { weight: 1, arbitrary: fc.constantFrom<string | null>(null, KEYS.read, 'not-a-key', '', 'x'.repeat(3000)) },
  );

function requestFor(route: Route): fc.Arbitrary<MalformedRequest> {
  const params = fc.tuple(...route.params.map(() => pathValue));
  const body = route.multipart ? multipart : route.json ? jsonBody(route) : fc.option(malformedJson.map((payload) => ({ payload, type: 'application/json' })), { nil: undefined });
  return fc.record({ values: params, query, body, key: keyFor(route) }).map(({ values, query: q, body: b, key }): MalformedRequest => {
    let url = route.path;
    route.params.forEach((name, i) => {
      url = url.replace(`{${name}}`, values[i]);
    });
    return {
      method: route.method,
      url: url + q,
      key,
      headers: b ? { 'content-type': b.type } : ({} as Record<string, string>),
      payload: b?.payload,
      route,
    };
  });
}

export function routesOf(openapi: { paths: Record<string, Record<string, { requestBody?: { content?: Record<string, unknown> }; responses?: Record<string, { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> }> }>> }): Route[] {
  const routes: Route[] = [];
  for (const [path, methods] of Object.entries(openapi.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const content = op.requestBody?.content ?? {};
      const notFound = op.responses?.['404']?.content?.['application/json']?.schema;
      routes.push({
        method: method.toUpperCase(),
        path,
        params: [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]),
        envelope: notFound ? 'success' in (notFound.properties ?? {}) : true,
        json: 'application/json' in content,
        multipart: 'multipart/form-data' in content,
      });
    }
  }
  return routes;
}

/** What is wrong with an answer, or null when it is one the service may give. */
export function problemWith(request: MalformedRequest, status: number, body: string): string | null {
  if (status >= 500) return `status ${status}`;
  if (status < 400) return null;
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(body) as Record<string, unknown>;
  } catch {
    return 'error body is not JSON';
  }
  if (status === 422) {
    const detail = parsed.detail as { loc: unknown[]; msg: unknown; type: unknown }[] | undefined;
    const ok =
      Array.isArray(detail) &&
      detail.length > 0 &&
      detail.every((d) => Array.isArray(d.loc) && ['body', 'query', 'path', 'header'].includes(String(d.loc[0])) && typeof d.msg === 'string' && typeof d.type === 'string');
    return ok && Object.keys(parsed).length === 1 ? null : '422 body is not {detail: [{loc, msg, type}]}';
  }
  const serviceError = (e: unknown) =>
    typeof e === 'object' && e !== null && typeof (e as Record<string, unknown>).error_code === 'string' && typeof (e as Record<string, unknown>).message === 'string';
  // A URL that matched no route (a broken path parameter) answers in the envelope too.
  const envelope = parsed.success === false && parsed.data === null && serviceError(parsed.error) && typeof parsed.meta === 'object';
  if (envelope) return request.route.envelope || status === 404 || status === 400 || status === 414 ? null : 'envelope on a bare route';
  if (serviceError(parsed) && !request.route.envelope) return null;
  return `error body not in the documented shape`;
}


/** Requests over all `routes`, routes with bodies weighted up: they have more to get wrong. */
export function malformedRequests(routes: Route[]): fc.Arbitrary<MalformedRequest> {
  return fc.oneof(...routes.map((route) => ({ weight: route.json || route.multipart ? 3 : 1, arbitrary: requestFor(route) })));
}
