// Validating against extraction schemas with Ajv and the formats extraction uses (date,
// date-time, time, email, uri, checked strictly): whether a schema is valid JSON Schema, and
// the problems of a result under it.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { LruMap } from '../lru.js';

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
function isDate(value: string): boolean {
  const m = DATE_RE.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return mo >= 1 && mo <= 12 && d >= 1 && d <= new Date(Date.UTC(y, mo, 0)).getUTCDate();
}
const TIME_RE = /^([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?(z|[+-]([01]\d|2[0-3]):?[0-5]\d)?$/i;
function isDateTime(value: string): boolean {
  const [date, time, ...rest] = value.split(/t|\s/i);
  return rest.length === 0 && isDate(date) && time !== undefined && TIME_RE.test(time) && /(z|[+-]\d\d:?\d\d)$/i.test(time);
}
const EMAIL_RE = /^[\p{L}\p{N}.!#$%&'*+/=?^_`{|}~-]+@[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?(?:\.[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?)+$/u;
function isUri(value: string): boolean {
  if (!/^[a-z][a-z0-9+.-]*:/i.test(value)) return false;
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

function createAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: true });
  ajv.addFormat('date', isDate);
  ajv.addFormat('date-time', isDateTime);
  ajv.addFormat('time', (v: string) => TIME_RE.test(v));
  ajv.addFormat('email', (v: string) => EMAIL_RE.test(v));
  ajv.addFormat('uri', isUri);
  return ajv;
}

const ajv = createAjv();

/** The schema without `$schema` and `$id`, which Ajv would resolve or register. */
function stripSchemaKeyword(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _s, $id: _i, ...rest } = schema;
  return rest;
}

function ajvMessage(error: ErrorObject): string {
  return `${error.instancePath || '(schema)'} ${error.message ?? 'is invalid'}`.trim();
}

/** Why the schema is not valid JSON Schema (meta-schema errors, or why it does not compile), at paths inside it; empty when it is. */
export function jsonSchemaProblems(schema: Record<string, unknown>): { path: string[]; message: string }[] {
  const bare = stripSchemaKeyword(schema);
  if (!ajv.validateSchema(bare)) {
    return (ajv.errors ?? []).slice(0, 20).map((e) => ({ path: e.instancePath.split('/').slice(1), message: ajvMessage(e) }));
  }
  try {
    ajv.compile(bare);
  } catch (error) {
    return [{ path: [], message: (error as Error).message }];
  } finally {
    ajv.removeSchema(bare);
  }
  return [];
}

// Validators by schema object (a run checks many values against the same field schemas) and
// by schema text, least recently used first, since every run reads its schema anew from the
// store. Ajv would also keep every schema object it compiled, for good: it is told to forget.
const validators = new WeakMap<object, ValidateFunction>();
const VALIDATORS_KEPT = 256;
const validatorsByText = new LruMap<string, ValidateFunction>(VALIDATORS_KEPT);

function validatorFor(schema: Record<string, unknown>): ValidateFunction {
  let validate = validators.get(schema);
  if (validate) return validate;
  const text = JSON.stringify(schema);
  validate = validatorsByText.get(text);
  if (!validate) {
    const stripped = stripSchemaKeyword(schema);
    validate = ajv.compile(stripped);
    ajv.removeSchema(stripped);
    validatorsByText.set(text, validate);
  }
  validators.set(schema, validate);
  return validate;
}

/** The problems of one value under a schema, as readable lines ("/date must match format "date""); empty when valid. */
export function validationErrors(schema: Record<string, unknown>, value: unknown): string[] {
  const validate = validatorFor(schema);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => {
    const where = e.instancePath === '' ? 'the record' : e.instancePath;
    if (e.keyword === 'required') return `${where} is missing the required property "${(e.params as { missingProperty: string }).missingProperty}"`;
    if (e.keyword === 'additionalProperties') return `${where} has the unknown property "${(e.params as { additionalProperty: string }).additionalProperty}"`;
    return `${where} ${e.message ?? 'is invalid'}`;
  });
}

/** Whether one value fits a field's own schema (type, format, enum, bounds, pattern). */
export function fitsField(field: { schema: Record<string, unknown> }, value: unknown): boolean {
  return validatorFor(field.schema)(value);
}
