// The metadata filter compiler: turns a metadata_filter object (and the created_at /
// updated_at filters) into a boolean SQL fragment. Every key path and value is a bound
// parameter; only fixed operator text of our own is ever written into the SQL.
import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import { errors } from '../errors.js';
import { checkPattern } from './regex-guard.js';

type Column = Expression<unknown>;
type Cond = RawBuilder<boolean>;
/** A jsonb value in SQL. */
type Json = RawBuilder<unknown>;

const MAX_DEPTH = 32;
const MAX_NODES = 1000;
const MAX_SEGMENT = 255;
const TYPES = ['string', 'number', 'boolean', 'array', 'object', 'null'];
const COMPARE: Record<string, string> = { $gt: '>', $lt: '<', $gte: '>=', $lte: '<=' };

const TRUE: Cond = sql<boolean>`TRUE`;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isOperatorObject(v: unknown): v is Record<string, unknown> {
  return isObject(v) && Object.keys(v).length > 0 && Object.keys(v).every((k) => k.startsWith('$'));
}

function and(conds: Cond[]): Cond {
  return conds.length === 0 ? TRUE : sql<boolean>`(${sql.join(conds, sql` AND `)})`;
}

function jsonb(value: unknown): Json {
  return sql`${JSON.stringify(value)}::jsonb`;
}

interface Ctx {
  root: string;
  nodes: number;
}

// Bounds the work one request can ask for: `depth` counts nested objects, `nodes` all keys
// and the elements of array operands ($in, $contains...), each compared with every document.
function spend(ctx: Ctx, nodes: number): void {
  ctx.nodes += nodes;
  if (ctx.nodes > MAX_NODES) throw errors.invalidFilter(ctx.root, `more than ${MAX_NODES} conditions`);
}

function visit(obj: Record<string, unknown>, ctx: Ctx, at: string, depth: number): void {
  if (depth > MAX_DEPTH) throw errors.invalidFilter(at, `nesting is deeper than ${MAX_DEPTH} levels`);
  spend(ctx, Object.keys(obj).length);
}

/** Compiles a metadata_filter object to a boolean SQL expression over the jsonb `column`. */
export function compileMetadataFilter(filter: unknown, column: Column): Cond {
  if (filter === null || filter === undefined) return TRUE;
  return compileFilter(filter, column, [], { root: 'metadata_filter', nodes: 0 }, 'metadata_filter', 0);
}

// A filter object: field keys (relative to `prefix`) and the logical operators.
function compileFilter(filter: unknown, column: Column, prefix: string[], ctx: Ctx, at: string, depth: number): Cond {
  if (!isObject(filter)) throw errors.invalidFilter(at, 'must be an object');
  visit(filter, ctx, at, depth);
  return and(
    Object.entries(filter).map(([key, value]) => {
      const here = `${at}.${key}`;
      if (!key.startsWith('$')) {
        return compileField(value, column, [...prefix, ...splitPath(key, here)], ctx, here, depth);
      }
      switch (key) {
        case '$and':
        case '$or': {
          const items = nonEmptyArray(value, here);
          const conds = items.map((item, i) => compileFilter(item, column, prefix, ctx, `${here}[${i}]`, depth + 1));
          return sql<boolean>`(${sql.join(conds, key === '$and' ? sql` AND ` : sql` OR `)})`;
        }
        case '$not':
          return sql<boolean>`(NOT ${compileFilter(value, column, prefix, ctx, here, depth + 1)})`;
        default:
          if (FIELD_OPERATORS.has(key)) throw errors.invalidFilter(here, 'operator must be applied to a field');
          throw errors.invalidFilter(here, 'unknown operator');
      }
    }),
  );
}

function splitPath(key: string, at: string): string[] {
  const segments = key.split('.');
  for (const s of segments) {
    if (s === '') throw errors.invalidFilter(at, 'field path has an empty segment');
    if (s.length > MAX_SEGMENT) throw errors.invalidFilter(at, `path segment longer than ${MAX_SEGMENT} characters`);
  }
  return segments;
}

function compileField(value: unknown, column: Column, path: string[], ctx: Ctx, at: string, depth: number): Cond {
  if (isObject(value) && Object.keys(value).length > 0) {
    const dollar = Object.keys(value).filter((k) => k.startsWith('$')).length;
    if (dollar === 0) return compileFilter(value, column, path, ctx, at, depth + 1);
    if (dollar < Object.keys(value).length) throw errors.invalidFilter(at, 'cannot mix operators and field names');
    return compileOperators(value, field(column, path), ctx, at, depth + 1);
  }
  // A plain value (an empty object included) means equality.
  const exact = equals(field(column, path), value, at);
  return containable(path, value) ? sql<boolean>`(${column} @> ${jsonb(nest(path, value))} AND ${exact})` : exact;
}

// Equality of a scalar under object keys implies jsonb containment, which a GIN index on
// the metadata answers without reading every document; the exact test stays beside it.
// Numeric segments may index arrays, where containment means something else: left out.
function containable(path: string[], value: unknown): boolean {
  return ['string', 'number', 'boolean'].includes(typeof value) && path.every((s) => !/^-?\d+$/.test(s));
}

function nest(path: string[], value: unknown): unknown {
  return path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
}

// The jsonb value at `path`, SQL NULL when missing; numeric segments also index arrays.
// The path is one text[] parameter (the driver quotes and escapes each element).
function field(column: Column, path: string[]): Json {
  return sql`(${column} #> ${path}::text[])`;
}

const text = (f: Json) => sql`(${f} #>> '{}')`;

// `cond` where the field has the given JSON type, else false. CASE rather than AND: only
// CASE guarantees that a cast or function in `cond` never sees a value of another kind.
function ifType(f: Json, type: 'number' | 'string' | 'array', cond: RawBuilder<unknown>): Cond {
  return sql<boolean>`(CASE WHEN jsonb_typeof(${f}) = ${sql.lit(type)} THEN ${cond} ELSE false END)`;
}

const FIELD_OPERATORS = new Set([
  '$eq', '$ne', '$gt', '$lt', '$gte', '$lte', '$in', '$nin',
  '$contains', '$containsAny', '$notContains', '$size', '$type', '$regex', '$iregex',
]);

// Conditions on one field. Every one is two-valued (never NULL), so that NOT of a condition
// on a missing field matches, as the spec wants for $not.
function compileOperators(ops: Record<string, unknown>, f: Json, ctx: Ctx, at: string, depth: number): Cond {
  visit(ops, ctx, at, depth);
  return and(
    Object.entries(ops).map(([op, v]) => {
      const here = `${at}.${op}`;
      if (Array.isArray(v)) spend(ctx, v.length);
      switch (op) {
        case '$eq':
          return equals(f, v, here);
        case '$ne':
          return sql<boolean>`(NOT ${equals(f, v, here)})`;
        case '$gt':
        case '$lt':
        case '$gte':
        case '$lte':
          return compare(f, COMPARE[op], v, here);
        case '$in':
          return oneOf(f, array(v, here), here);
        case '$nin':
          return sql<boolean>`(NOT ${oneOf(f, array(v, here), here)})`;
        case '$contains':
          return contains(f, v, here, 'all');
        case '$containsAny':
          return contains(f, array(v, here), here, 'any');
        case '$notContains':
          return sql<boolean>`(NOT ${contains(f, v, here, 'any')})`;
        case '$size':
          if (!Number.isInteger(v) || (v as number) < 0) {
            throw errors.invalidFilter(here, 'expects a non-negative integer');
          }
          return ifType(f, 'array', sql`jsonb_array_length(${f}) = ${v}::int`);
        case '$type':
          if (typeof v !== 'string' || !TYPES.includes(v)) {
            throw errors.invalidFilter(here, `expects one of ${TYPES.join(', ')}`);
          }
          return sql<boolean>`COALESCE(jsonb_typeof(${f}) = ${v}::text, false)`;
        case '$regex':
        case '$iregex':
          checkPattern(v, here);
          return ifType(f, 'string', sql`${text(f)} ${sql.raw(op === '$regex' ? '~' : '~*')} ${v}::text`);
        case '$not':
          if (!isOperatorObject(v)) throw errors.invalidFilter(here, 'expects an object of operators');
          return sql<boolean>`(NOT ${compileOperators(v, f, ctx, here, depth + 1)})`;
        case '$and':
        case '$or': {
          const conds = nonEmptyArray(v, here).map((item, i) => {
            if (!isOperatorObject(item)) {
              throw errors.invalidFilter(`${here}[${i}]`, 'expects an object of operators');
            }
            return compileOperators(item, f, ctx, `${here}[${i}]`, depth + 1);
          });
          return sql<boolean>`(${sql.join(conds, op === '$and' ? sql` AND ` : sql` OR `)})`;
        }
        default:
          throw errors.invalidFilter(here, 'unknown operator');
      }
    }),
  );
}

function array(v: unknown, at: string): unknown[] {
  if (!Array.isArray(v)) throw errors.invalidFilter(at, 'expects an array');
  return v;
}

function nonEmptyArray(v: unknown, at: string): unknown[] {
  if (!Array.isArray(v) || v.length === 0) throw errors.invalidFilter(at, 'expects a non-empty array');
  return v;
}

function jsonValue(v: unknown, at: string): unknown {
  if (v === undefined || (typeof v === 'number' && !Number.isFinite(v))) {
    throw errors.invalidFilter(at, 'expects a JSON value');
  }
  return v;
}

// Deep equality by jsonb `=` (numbers by value, objects regardless of key order).
function equals(f: Json, v: unknown, at: string): Cond {
  return sql<boolean>`COALESCE(${f} = ${jsonb(jsonValue(v, at))}, false)`;
}

// Numbers compare as numbers, strings byte-wise as strings; across kinds nothing matches.
function compare(f: Json, operator: string, v: unknown, at: string): Cond {
  const op = sql.raw(operator);
  if (typeof v === 'number' && Number.isFinite(v)) {
    return ifType(f, 'number', sql`(${f})::numeric ${op} ${String(v)}::numeric`);
  }
  if (typeof v === 'string') return ifType(f, 'string', sql`${text(f)} COLLATE "C" ${op} ${v}::text`);
  throw errors.invalidFilter(at, 'expects a number or a string');
}

function oneOf(f: Json, values: unknown[], at: string): Cond {
  values.forEach((v, i) => jsonValue(v, `${at}[${i}]`));
  return sql<boolean>`EXISTS (SELECT 1 FROM jsonb_array_elements(${jsonb(values)}) AS mf_in(v) WHERE mf_in.v = ${f})`;
}

// Array field: all (or any) of the wanted elements are present, by exact jsonb equality
// (not `@>`, which would let {"k":1} match {"k":1,"x":2}). String field with a string
// value: substring test. Anything else matches nothing.
function contains(f: Json, v: unknown, at: string, mode: 'all' | 'any'): Cond {
  const want = jsonb(Array.isArray(v) ? v : [jsonValue(v, at)]);
  const present = sql`EXISTS (SELECT 1 FROM jsonb_array_elements(${f}) AS mf_el(v) WHERE mf_el.v = mf_want.v)`;
  const inArray =
    mode === 'all'
      ? sql`NOT EXISTS (SELECT 1 FROM jsonb_array_elements(${want}) AS mf_want(v) WHERE NOT ${present})`
      : sql`EXISTS (SELECT 1 FROM jsonb_array_elements(${want}) AS mf_want(v) WHERE ${present})`;
  if (typeof v !== 'string') return ifType(f, 'array', inArray);
  const inString = sql`strpos(${text(f)}, ${v}::text) > 0`;
  return sql<boolean>`(CASE jsonb_typeof(${f}) WHEN 'array' THEN ${inArray}
    WHEN 'string' THEN ${inString} ELSE false END)`;
}

const DATE =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?(Z|[+-](?:0\d|1[0-5]):[0-5]\d)?)?$/;

// An ISO date (YYYY-MM-DD[THH:MM:SS[.ffffff][Z|±HH:MM]]), checked against the calendar and
// returned with an explicit zone: none means UTC.
function parseDate(v: unknown, at: string): string {
  const m = typeof v === 'string' ? DATE.exec(v) : null;
  if (!m) throw errors.invalidFilter(at, 'expects an ISO date string (YYYY-MM-DDTHH:MM:SS)');
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone = 'Z'] = m;
  // setUTCFullYear, unlike Date.UTC, leaves years below 100 alone; PostgreSQL has no year 0.
  const date = new Date(0);
  date.setUTCFullYear(+y, +mo - 1, +d);
  date.setUTCHours(+h, +mi, +s);
  const valid =
    +y > 0 &&
    date.getUTCFullYear() === +y &&
    date.getUTCMonth() === +mo - 1 &&
    date.getUTCDate() === +d &&
    date.getUTCHours() === +h &&
    date.getUTCMinutes() === +mi &&
    date.getUTCSeconds() === +s;
  if (!valid) throw errors.invalidFilter(at, 'is not a valid date');
  return `${y}-${mo}-${d}T${h}:${mi}:${s}${frac}${zone}`;
}

/** Compiles created_at_filter / updated_at_filter over a timestamptz column. */
export function compileDateFilter(filter: unknown, column: Column, name: string): Cond {
  if (filter === null || filter === undefined) return TRUE;
  if (!isObject(filter)) throw errors.invalidFilter(name, 'must be an object of operators');
  return and(
    Object.entries(filter).map(([op, v]) => {
      const at = `${name}.${op}`;
      if (op === '$eq' || op === '$ne' || Object.hasOwn(COMPARE, op)) {
        const operator = op === '$eq' ? '=' : op === '$ne' ? '<>' : COMPARE[op];
        return sql<boolean>`(${column} ${sql.raw(operator)} ${parseDate(v, at)}::timestamptz)`;
      }
      if (op === '$in' || op === '$nin') {
        const dates = array(v, at).map((d, i) => parseDate(d, `${at}[${i}]`));
        const list = sql`(SELECT jsonb_array_elements_text(${JSON.stringify(dates)}::jsonb)::timestamptz)`;
        return sql<boolean>`(${column} ${sql.raw(op === '$in' ? 'IN' : 'NOT IN')} ${list})`;
      }
      throw errors.invalidFilter(at, 'unknown operator');
    }),
  );
}

/** The filters of a request that selects documents (search, answer, delete preview). */
export interface DocumentFilters {
  metadata_filter?: Record<string, unknown> | null;
  created_at_filter?: Record<string, unknown> | null;
  updated_at_filter?: Record<string, unknown> | null;
}

/**
 * Document filters compiled once: the condition over the documents table (aliased `d` inside
 * the store's queries) and a key that is equal for filters that compile to the same condition.
 */
export interface DocumentFilter {
  readonly key: string;
  readonly condition: Expression<SqlBool>;
}

function isEmpty(filter: Record<string, unknown> | null | undefined): boolean {
  return !filter || Object.keys(filter).length === 0;
}

/** Compiles the filters (throwing the documented validation errors), or null when nothing is filtered. */
export function compileDocumentFilter(filters: DocumentFilters): DocumentFilter | null {
  const { metadata_filter, created_at_filter, updated_at_filter } = filters;
  if (isEmpty(metadata_filter) && isEmpty(created_at_filter) && isEmpty(updated_at_filter)) return null;
  const condition = sql<SqlBool>`(${compileMetadataFilter(metadata_filter, sql.ref('d.metadata'))}
    AND ${compileDateFilter(created_at_filter, sql.ref('d.created_at'), 'created_at_filter')}
    AND ${compileDateFilter(updated_at_filter, sql.ref('d.updated_at'), 'updated_at_filter')})`;
  return { key: JSON.stringify([metadata_filter ?? null, created_at_filter ?? null, updated_at_filter ?? null]), condition };
}

/**
 * `filter` (or no filter) narrowed by a further metadata filter, as if the two metadata
 * filters were combined with $and; only the further one is compiled (and may throw).
 */
export function narrowDocumentFilter(filter: DocumentFilter | null, metadataFilter: Record<string, unknown>): DocumentFilter {
  const further = compileMetadataFilter(metadataFilter, sql.ref('d.metadata'));
  return {
    key: JSON.stringify([filter?.key ?? null, metadataFilter]),
    condition: filter ? sql<SqlBool>`(${filter.condition} AND ${further})` : further,
  };
}
