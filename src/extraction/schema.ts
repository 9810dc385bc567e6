// Extraction schemas: the JSON Schema subset an extraction definition may hold (checked on
// create, every problem answered as a 422 item), its description as fields for the
// extractors, the validator every result passes before it is stored, and the strict form
// sent to a language model as its structured-output format.
import type { FieldIssue } from '../errors.js';
import { jsonSchemaProblems } from './schema-validation.js';

export { fitsField, validationErrors } from './schema-validation.js';

export type ScalarType = 'string' | 'number' | 'integer' | 'boolean';
export type FieldType = ScalarType | 'array' | 'object';

export const SUPPORTED_FORMATS = ['date', 'date-time', 'time', 'email', 'uri'] as const;

/** One property of an extraction schema, as the extractors see it. */
export interface FieldSpec {
  key: string;
  /** Keys from the record down to this field. */
  path: string[];
  type: FieldType;
  nullable: boolean;
  format: string | null;
  enum: unknown[] | null;
  title: string | null;
  description: string;
  /** Listed in its object's `required`. */
  required: boolean;
  /** Arrays: the item (key and path are the array's). */
  items: FieldSpec | null;
  /** Objects: the properties, in declaration order. */
  properties: FieldSpec[];
  /** The property's own schema (for checking one value). */
  schema: Record<string, unknown>;
}

export const LIMITS = {
  /** Characters of the schema as JSON. */
  schemaChars: 64 * 1024,
  /** Properties of one object. */
  properties: 100,
  /** Characters of a property name. */
  propertyName: 100,
  /** Nesting: the record, then objects or arrays of objects, then their scalar properties. */
  depth: 3,
} as const;

const ANNOTATIONS = new Set(['title', 'description', 'default', 'examples', '$comment', 'deprecated', 'readOnly', 'writeOnly', '$schema', '$id']);
const KEYWORDS: Record<FieldType, Set<string>> = {
  string: new Set(['type', 'enum', 'const', 'format', 'pattern', 'minLength', 'maxLength']),
  number: new Set(['type', 'enum', 'const', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf']),
  integer: new Set(['type', 'enum', 'const', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf']),
  boolean: new Set(['type', 'enum', 'const']),
  array: new Set(['type', 'items', 'minItems', 'maxItems', 'uniqueItems']),
  object: new Set(['type', 'properties', 'required', 'additionalProperties']),
};
const TYPES = new Set<string>(['string', 'number', 'integer', 'boolean', 'array', 'object']);

// ---------------------------------------------------------------------------------------------
// Checking a schema

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `type: "x"`, `type: ["x", "null"]` or `anyOf: [{...x}, {type: "null"}]` -> x and whether null is allowed. */
function typeOf(node: Record<string, unknown>): { type: string | null; nullable: boolean; problem: string | null } {
  if (node.anyOf !== undefined) {
    const branches = node.anyOf;
    if (!Array.isArray(branches) || branches.length !== 2 || !branches.every(isObject)) {
      return { type: null, nullable: false, problem: 'anyOf is only supported as [schema, {"type": "null"}] (a nullable value)' };
    }
    const nullIndex = branches.findIndex((b) => b.type === 'null' && Object.keys(b).length === 1);
    if (nullIndex < 0) return { type: null, nullable: false, problem: 'anyOf is only supported as [schema, {"type": "null"}] (a nullable value)' };
    const other = typeOf(branches[1 - nullIndex]);
    return { ...other, nullable: true };
  }
  const type = node.type;
  if (type === undefined) return { type: null, nullable: false, problem: 'Every property needs a "type"' };
  if (typeof type === 'string') return { type, nullable: false, problem: TYPES.has(type) ? null : `Unsupported type "${type}"; use string, number, integer, boolean, array or object` };
  if (Array.isArray(type) && type.every((t) => typeof t === 'string')) {
    const others = type.filter((t) => t !== 'null');
    if (others.length !== 1 || type.length > 2) return { type: null, nullable: false, problem: 'A type list may only add "null" to one type, e.g. ["string", "null"]' };
    return { type: others[0], nullable: type.includes('null'), problem: TYPES.has(others[0]) ? null : `Unsupported type "${others[0]}"` };
  }
  return { type: null, nullable: false, problem: '"type" must be a string or a list of strings' };
}

/** The node with a nullable anyOf unwrapped into its non-null branch (annotations of both kept). */
function unwrap(node: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(node.anyOf)) return node;
  const branch = (node.anyOf as Record<string, unknown>[]).find((b) => b.type !== 'null') ?? {};
  const { anyOf: _anyOf, ...rest } = node;
  return { ...branch, ...rest };
}

class SchemaChecker {
  readonly issues: FieldIssue[] = [];

  constructor(private readonly base: string[]) {}

  private add(loc: string[], msg: string, type = 'value_error'): void {
    if (this.issues.length < 20) this.issues.push({ path: [...this.base, ...loc], msg, type });
  }

  root(schema: unknown): void {
    if (!isObject(schema)) return this.add([], 'The schema must be a JSON object', 'dict_type');
    const { type, problem } = typeOf(schema);
    if (problem || type !== 'object') return this.add(['type'], 'The schema must describe an object: "type": "object"', 'schema_type');
    this.object(schema, [], 1);
  }

  private object(node: Record<string, unknown>, loc: string[], depth: number): void {
    const properties = node.properties;
    if (!isObject(properties)) return this.add([...loc, 'properties'], 'An object needs "properties": a JSON object of named property schemas', 'missing');
    const names = Object.keys(properties);
    if (names.length === 0) return this.add([...loc, 'properties'], 'An object needs at least one property', 'too_short');
    if (names.length > LIMITS.properties) return this.add([...loc, 'properties'], `An object may have at most ${LIMITS.properties} properties`, 'too_long');
    for (const name of names) {
      // eslint-disable-next-line no-control-regex
      if (name.trim() === '' || name.length > LIMITS.propertyName || /[\u0000-\u001f]/.test(name)) {
        this.add([...loc, 'properties', name], `Property names must be 1 to ${LIMITS.propertyName} printable characters`, 'schema_property_name');
        continue;
      }
      this.property(properties[name], [...loc, 'properties', name], depth);
    }
    if (node.required !== undefined) {
      const required = node.required;
      if (!Array.isArray(required) || !required.every((r) => typeof r === 'string')) {
        this.add([...loc, 'required'], '"required" must be a list of property names', 'list_type');
      } else {
        for (const r of required) if (!names.includes(r)) this.add([...loc, 'required'], `"required" names "${r}", which is not a property`, 'schema_required');
        if (new Set(required).size !== required.length) this.add([...loc, 'required'], '"required" lists a property twice', 'schema_required');
      }
    }
    if (node.additionalProperties !== undefined && typeof node.additionalProperties !== 'boolean') {
      this.add([...loc, 'additionalProperties'], '"additionalProperties" must be true or false', 'bool_type');
    }
    this.keywords(node, 'object', loc);
  }

  private keywords(node: Record<string, unknown>, type: FieldType, loc: string[]): void {
    for (const key of Object.keys(node)) {
      if (ANNOTATIONS.has(key) || KEYWORDS[type].has(key) || key === 'anyOf' || key.startsWith('x-')) continue;
      const hint = key === '$ref' || key === '$defs' || key === 'definitions' ? '; write the property schemas inline' : '';
      this.add([...loc, key], `Unsupported keyword "${key}" for a ${type}${hint}`, 'schema_keyword');
    }
    if (node.description !== undefined && typeof node.description !== 'string') this.add([...loc, 'description'], '"description" must be a string', 'string_type');
    if (node.title !== undefined && typeof node.title !== 'string') this.add([...loc, 'title'], '"title" must be a string', 'string_type');
  }

  private property(raw: unknown, loc: string[], depth: number): void {
    if (!isObject(raw)) return this.add(loc, 'A property schema must be a JSON object', 'dict_type');
    const { type, problem } = typeOf(raw);
    if (problem || !type) return this.add(Array.isArray(raw.anyOf) ? [...loc, 'anyOf'] : [...loc, 'type'], problem ?? 'Every property needs a "type"', 'schema_type');
    const node = unwrap(raw);
    const fieldType = type as FieldType;
    this.keywords(node, fieldType, loc);
    if (fieldType === 'string' && node.format !== undefined && !(SUPPORTED_FORMATS as readonly unknown[]).includes(node.format)) {
      this.add([...loc, 'format'], `Unsupported format ${JSON.stringify(node.format)}; use one of ${SUPPORTED_FORMATS.join(', ')}`, 'schema_format');
    }
    if (node.enum !== undefined) {
      if (!Array.isArray(node.enum) || node.enum.length === 0) this.add([...loc, 'enum'], '"enum" must be a non-empty list', 'list_type');
      else if (!node.enum.every((v) => v === null || scalarMatches(fieldType, v))) this.add([...loc, 'enum'], `Every "enum" value must be a ${fieldType}`, 'schema_enum');
    }
    if (fieldType === 'array') {
      if (!isObject(node.items)) return this.add([...loc, 'items'], 'An array needs "items": the schema of one element', 'missing');
      const items = typeOf(node.items);
      if (items.problem || !items.type) return this.add([...loc, 'items', 'type'], items.problem ?? 'Array items need a "type"', 'schema_type');
      if (items.type === 'array') return this.add([...loc, 'items', 'type'], 'Arrays of arrays are not supported', 'schema_type');
      if (items.type === 'object') {
        if (depth + 1 > LIMITS.depth - 1) return this.add([...loc, 'items'], `Schemas may nest at most ${LIMITS.depth} levels`, 'schema_depth');
        this.object(unwrap(node.items), [...loc, 'items'], depth + 1);
      } else {
        this.property(node.items, [...loc, 'items'], depth + 1);
      }
    }
    if (fieldType === 'object') {
      if (depth + 1 > LIMITS.depth - 1) return this.add(loc, `Schemas may nest at most ${LIMITS.depth} levels`, 'schema_depth');
      this.object(node, loc, depth + 1);
    }
  }
}

function scalarMatches(type: FieldType, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    default:
      return false;
  }
}

/**
 * Every problem of an extraction schema as field issues under `base` (the path of the schema);
 * empty when the schema is usable: an object with typed properties in the supported subset,
 * valid under the JSON Schema meta-schema, compilable (patterns are valid regular expressions).
 */
export function checkExtractionSchema(schema: unknown, base: string[] = ['schema']): FieldIssue[] {
  if (isObject(schema) && JSON.stringify(schema).length > LIMITS.schemaChars) {
    return [{ path: base, msg: `The schema is larger than ${LIMITS.schemaChars} characters`, type: 'too_long' }];
  }
  const checker = new SchemaChecker(base);
  checker.root(schema);
  if (checker.issues.length > 0) return checker.issues;
  return jsonSchemaProblems(schema as Record<string, unknown>).map((p) => ({
    path: [...base, ...p.path],
    msg: `Not a valid JSON Schema: ${p.message}`,
    type: 'schema_invalid',
  }));
}

// ---------------------------------------------------------------------------------------------
// Describing a checked schema

function describe(key: string, raw: Record<string, unknown>, path: string[], required: boolean): FieldSpec {
  const { type, nullable } = typeOf(raw);
  const node = unwrap(raw);
  const spec: FieldSpec = {
    key,
    path,
    type: type as FieldType,
    nullable,
    format: typeof node.format === 'string' ? node.format : null,
    enum: Array.isArray(node.enum) ? node.enum : node.const !== undefined ? [node.const] : null,
    title: typeof node.title === 'string' ? node.title : null,
    description: typeof node.description === 'string' ? node.description : '',
    required,
    items: null,
    properties: [],
    schema: raw,
  };
  if (spec.type === 'array' && isObject(node.items)) spec.items = describe(key, node.items, path, false);
  if (spec.type === 'object') spec.properties = describeProperties(node, path);
  return spec;
}

function describeProperties(node: Record<string, unknown>, path: string[]): FieldSpec[] {
  const properties = isObject(node.properties) ? node.properties : {};
  const required = Array.isArray(node.required) ? (node.required as string[]) : [];
  return Object.entries(properties).map(([key, value]) => describe(key, value as Record<string, unknown>, [...path, key], required.includes(key)));
}

/** The record's fields, in declaration order (the schema must have passed checkExtractionSchema). */
export function describeSchema(schema: Record<string, unknown>): FieldSpec[] {
  return describeProperties(schema, []);
}

// ---------------------------------------------------------------------------------------------
// The strict form for structured outputs

/**
 * The schema in the form structured-output APIs accept in strict mode: every property listed
 * in `required` and made nullable (null = "not in this part of the text": a required field
 * may be stated in another part; required fields are checked after the parts are merged),
 * `additionalProperties: false` on every object, formats and bounds dropped (they are
 * checked on our side, after normalisation), descriptions kept.
 */
export function strictSchema(schema: Record<string, unknown>): Record<string, unknown> {
  return strictObject(unwrap(schema));
}

function strictObject(node: Record<string, unknown>): Record<string, unknown> {
  const properties = isObject(node.properties) ? node.properties : {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(properties)) out[key] = strictProperty(value as Record<string, unknown>, true);
  return {
    type: 'object',
    ...(typeof node.description === 'string' ? { description: node.description } : {}),
    properties: out,
    required: Object.keys(out),
    additionalProperties: false,
  };
}

function strictProperty(raw: Record<string, unknown>, optional: boolean): Record<string, unknown> {
  const { type, nullable } = typeOf(raw);
  const node = unwrap(raw);
  const hints: string[] = [];
  if (typeof node.description === 'string') hints.push(node.description);
  if (typeof node.format === 'string') hints.push(FORMAT_HINTS[node.format] ?? `format: ${node.format}`);
  let out: Record<string, unknown>;
  if (type === 'object') {
    out = strictObject(node);
  } else if (type === 'array') {
    out = { type: 'array', items: isObject(node.items) ? strictProperty(node.items, false) : {} };
  } else {
    out = { type };
    if (Array.isArray(node.enum)) out.enum = node.enum.filter((v) => v !== null);
  }
  if (hints.length > 0) out.description = hints.join(' ');
  if (optional || nullable) {
    out.type = [out.type, 'null'];
    if (Array.isArray(out.enum)) out.enum = [...(out.enum as unknown[]), null];
  }
  return out;
}

const FORMAT_HINTS: Record<string, string> = {
  date: 'A date as YYYY-MM-DD.',
  'date-time': 'A date and time as YYYY-MM-DDTHH:MM:SSZ (RFC 3339).',
  time: 'A time of day as HH:MM:SS.',
  email: 'An e-mail address.',
  uri: 'An absolute URL with its scheme (https://...).',
};
