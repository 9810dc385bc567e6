// Request validation: Ajv compilers per request part, the translation of Ajv errors into
// FastAPI-style 422 items ({loc, msg, type}), and the location of services' field paths.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { jsonTextIssues, parseRequestJson, type JsonParseOptions } from '../text/json-text.js';
import { ValidationError, type FieldIssue } from '../errors.js';

/** One item of a 422 body: `loc` starts with the part of the request (body, query, path, header). */
export interface ValidationIssue {
  loc: string[];
  msg: string;
  type: string;
}

/** A request that fails validation; rendered as 422 `{detail: [...]}`. */
export class RequestValidationError extends Error {
  readonly issues: ValidationIssue[];

  constructor(issues: ValidationIssue[]) {
    super(issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '));
    this.name = 'RequestValidationError';
    this.issues = issues;
  }
}

function locate(part: string, issue: FieldIssue): ValidationIssue {
  return { loc: [part, ...issue.path], msg: issue.msg, type: issue.type };
}

/** Field issues located in one part of the request ('body', 'query', 'path'). */
export function located(part: string, issues: FieldIssue[]): RequestValidationError {
  return new RequestValidationError(issues.map((issue) => locate(part, issue)));
}

function declares(partSchema: unknown, field: string): boolean {
  const properties = (partSchema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return properties !== undefined && Object.hasOwn(properties, field);
}

export interface RouteSchema {
  body?: unknown;
  params?: unknown;
  querystring?: unknown;
}

/**
 * A service's validation error located where each field came from in this route: the body
 * (also for multipart form fields, which no schema declares) unless only the path or the
 * query string declares the field.
 */
export function locateInRoute(error: ValidationError, schema: RouteSchema | undefined): RequestValidationError {
  const partOf = (field: string | undefined): string => {
    if (field === undefined || declares(schema?.body, field)) return 'body';
    if (declares(schema?.params, field)) return 'path';
    return declares(schema?.querystring, field) ? 'query' : 'body';
  };
  return new RequestValidationError(error.issues.map((issue) => locate(partOf(issue.path[0]), issue)));
}

// A 1536-element vector of strings would otherwise answer 1536 items.
const MAX_ISSUES = 20;

const PART_LOC: Record<string, string> = {
  body: 'body',
  querystring: 'query',
  params: 'path',
  headers: 'header',
};

const TYPE_NAMES: Record<string, [string, string]> = {
  string: ['a valid string', 'string_type'],
  number: ['a valid number', 'float_type'],
  integer: ['a valid integer', 'int_type'],
  boolean: ['a valid boolean', 'bool_type'],
  array: ['a valid list', 'list_type'],
  object: ['a valid dictionary', 'dict_type'],
  null: ['null', 'none_type'],
};

function describeType(type: string | string[]): [string, string] {
  const types = (Array.isArray(type) ? type : String(type).split(',')).filter((t) => t !== 'null');
  const [name, code] = TYPE_NAMES[types[0]] ?? [`of type ${types[0]}`, 'type_error'];
  return [name, code];
}

function issueFor(part: string, error: ErrorObject): ValidationIssue {
  const loc = [part, ...error.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))];
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { loc: [...loc, String(p.missingProperty)], msg: 'Field required', type: 'missing' };
    case 'type': {
      const [name, type] = describeType(p.type as string | string[]);
      return { loc, msg: `Input should be ${name}`, type };
    }
    case 'maxLength':
      return { loc, msg: `String should have at most ${p.limit} characters`, type: 'string_too_long' };
    case 'minLength':
      return { loc, msg: `String should have at least ${p.limit} characters`, type: 'string_too_short' };
    case 'maxItems':
      return { loc, msg: `List should have at most ${p.limit} items`, type: 'too_long' };
    case 'minItems':
      return { loc, msg: `List should have at least ${p.limit} items`, type: 'too_short' };
    case 'minimum':
      return { loc, msg: `Input should be greater than or equal to ${p.limit}`, type: 'greater_than_equal' };
    case 'maximum':
      return { loc, msg: `Input should be less than or equal to ${p.limit}`, type: 'less_than_equal' };
    case 'exclusiveMinimum':
      return { loc, msg: `Input should be greater than ${p.limit}`, type: 'greater_than' };
    case 'exclusiveMaximum':
      return { loc, msg: `Input should be less than ${p.limit}`, type: 'less_than' };
    case 'enum':
      return {
        loc,
        msg: `Input should be ${(p.allowedValues as unknown[]).map((v) => `'${String(v)}'`).join(' or ')}`,
        type: 'enum',
      };
    case 'pattern':
      return { loc, msg: `String should match pattern '${p.pattern}'`, type: 'string_pattern_mismatch' };
    default:
      return { loc, msg: error.message ?? 'Invalid value', type: 'value_error' };
  }
}

/** Turns Ajv errors into 422 issues, dropping duplicates and the noise of union branches. */
export function toValidationError(part: string, ajvErrors: ErrorObject[]): RequestValidationError {
  const loc = PART_LOC[part] ?? part;
  const seen = new Set<string>();
  const issues: ValidationIssue[] = [];
  for (const error of ajvErrors) {
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'if') continue;
    const issue = issueFor(loc, error);
    const key = `${issue.loc.join('\u0000')}|${issue.type}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
    if (issues.length >= MAX_ISSUES) break;
  }
  if (issues.length === 0) issues.push({ loc: [loc], msg: 'Invalid input', type: 'value_error' });
  return new RequestValidationError(issues);
}

/** A body's checks: `null` when it is valid (defaults filled in), else its 422. */
export type BodyValidator = (data: unknown) => RequestValidationError | null;

// Bodies are strict JSON (no coercion: "1" is not a number); path and query values arrive as
// strings and are coerced to the declared type.
const bodyAjv = () => new Ajv({ allErrors: true, coerceTypes: false, useDefaults: true, strict: false });

function bodyValidator(validate: ValidateFunction): BodyValidator {
  return (data) => {
    if (data === undefined || data === null) return new RequestValidationError([{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
    return validate(data) ? null : toValidationError('body', validate.errors ?? []);
  };
}

/**
 * The checks a route with `schema` as its body runs on it, for a value that comes as a part
 * of another body and is answered on its own (an item of a batch): the same 422 items, each
 * located as in that route's body.
 */
export function compileBodyValidator(schema: object): BodyValidator {
  return bodyValidator(bodyAjv().compile(schema));
}

/** The schema compiler of one app. */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const bodies = bodyAjv();
  const paramsAjv = new Ajv({ allErrors: true, coerceTypes: true, useDefaults: true, strict: false });
  return ({ schema, httpPart }) => {
    const part = httpPart ?? 'body';
    if (part === 'body') {
      const validateBody = bodyValidator(bodies.compile(schema as object));
      return (data: unknown) => {
        const error = validateBody(data);
        return error ? { error } : { value: data };
      };
    }
    const validate: ValidateFunction = paramsAjv.compile(schema as object);
    return (data: unknown) => {
      // Path and query strings reach the store as text: a NUL (`%00`) is refused here. Bodies
      // were checked when their JSON was parsed.
      if (part === 'params' || part === 'querystring') {
        const issues = jsonTextIssues(data, []);
        if (issues.length > 0) return { error: located(PART_LOC[part], issues) };
      }
      if (validate(data)) return { value: data };
      return { error: toValidationError(part, validate.errors ?? []) };
    };
  };
}

type ParserDone = (error: Error | null, body?: unknown) => void;

/**
 * The application/json parser: an empty body is no body (the validator answers "Field
 * required"), malformed JSON a 422 json_invalid, as FastAPI answers it.
 */
export function jsonBodyParser(options: JsonParseOptions = {}) {
  return (_request: FastifyRequest, body: string | Buffer, done: ParserDone): void => {
    const text = body as string;
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    try {
      done(null, parseRequestJson(text, [], options));
    } catch (error) {
      done(error instanceof ValidationError ? located('body', error.issues) : (error as Error), undefined);
    }
  };
}
