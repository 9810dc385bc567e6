// The single error renderer: every failure leaves the service through here, in the
// documented shape (envelope, bare service error, or 422 detail), never with a stack trace.
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ValidationError, errors } from '../errors.js';
import { StoreError } from '../store/errors.js';
import { discardBody, rawAnswer } from './body-limit.js';
import { errorBody, validationBody, type ResponseShape } from './envelope.js';
import { RequestValidationError, locateInRoute, type RouteSchema, type ValidationIssue } from './validation.js';

function shapeOf(request: FastifyRequest): ResponseShape {
  return request.routeOptions?.config?.shape ?? 'envelope';
}

function fromStoreError(error: StoreError): AppError {
  switch (error.kind) {
    case 'invalid_regex':
      return errors.invalidFilter('', `invalid regular expression: ${error.detail}`);
    case 'invalid_value':
      return errors.invalidRequest(`invalid value: ${error.detail}`);
    case 'too_complex':
      return errors.invalidRequest('The request is too complex for the database to evaluate');
    case 'cancelled':
      return errors.unavailable('The query took too long and was cancelled');
    case 'unavailable':
      return errors.unavailable('The database is unavailable; try again shortly');
    case 'connection_failed':
      return errors.unavailable('The database connection failed; try again shortly');
  }
}

function fromFastifyError(error: FastifyError, bodyLimit: number): AppError | RequestValidationError | null {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.payloadTooLarge(bodyLimit);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return errors.unsupportedMediaType('Unsupported Content-Type; send application/json');
    case 'FST_PARTS_LIMIT':
    case 'FST_FILES_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return errors.tooManyFormParts();
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new RequestValidationError([{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
    default:
      if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
        return errors.invalidRequest(error.message);
      }
      return null;
  }
}

export function toKnownError(error: unknown, bodyLimit: number): AppError | ValidationError | RequestValidationError | null {
  if (error instanceof AppError || error instanceof ValidationError || error instanceof RequestValidationError) return error;
  if (error instanceof StoreError) return fromStoreError(error);
  if (typeof error !== 'object' || error === null) return null;
  const candidate = error as FastifyError & { code?: string };
  if (typeof candidate.code === 'string' && candidate.code.startsWith('FST_')) {
    return fromFastifyError(candidate, bodyLimit);
  }
  return null;
}

export interface ErrorLimits {
  bodyLimit: number;
  /** The most of an unread body read and discarded so the client can read the answer. */
  drainBytes: number;
}

// A client still sending a body it will never have read (too large, or refused before it
// was read) sees the connection reset before it reads the answer if we answer and close at
// once. So the rest is read and thrown away first, within a bound of bytes and time.
const DRAIN_MS = 10_000;

export function createErrorHandler(limits: ErrorLimits) {
  return async function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    await discardBody(request.raw, limits.drainBytes, DRAIN_MS);
    // A route may take larger bodies than the app's default (uploads, batches).
    const known = toKnownError(error, request.routeOptions?.bodyLimit ?? limits.bodyLimit);
    if (known instanceof ValidationError) {
      return reply.status(422).send(validationBody(locateInRoute(known, request.routeOptions.schema)));
    }
    if (known instanceof RequestValidationError) {
      return reply.status(422).send(validationBody(known));
    }
    if (known) {
      if (known.status >= 500) request.log.warn({ err: error }, 'request failed');
      return reply.status(known.status).send(errorBody(shapeOf(request), known));
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.status(500).send(errorBody(shapeOf(request), errors.internal()));
  };
}

/** A 422 has no error code of its own; an item's failure carries this one beside its detail. */
export const VALIDATION_ERROR = 'VALIDATION_ERROR';

/** The failure of one item of a batch: the status its own request would have had, and its error. */
export interface ItemFailure {
  status: number;
  error: { error_code: string; message: string; detail?: ValidationIssue[] };
}

/**
 * How the single route whose schema is `schema` would have answered `error` for this item
 * alone: a 422's detail located as in that route's body, a service error's code and message.
 */
export function itemFailure(error: unknown, schema: RouteSchema, request: FastifyRequest): ItemFailure {
  const known = toKnownError(error, 0);
  const validation = known instanceof ValidationError ? locateInRoute(known, schema) : known instanceof RequestValidationError ? known : null;
  if (validation) return { status: 422, error: { error_code: VALIDATION_ERROR, message: validation.message, detail: validation.issues } };
  if (known instanceof AppError) {
    if (known.status >= 500) request.log.warn({ err: error }, 'batch item failed');
    return { status: known.status, error: { error_code: known.code, message: known.message } };
  }
  request.log.error({ err: error }, 'unhandled error in a batch item');
  const internal = errors.internal();
  return { status: internal.status, error: { error_code: internal.code, message: internal.message } };
}

/**
 * The error envelope of a failure after a streamed response began: its status line is sent,
 * so the failure travels in the stream, in the shape the route's errors have.
 */
export function streamErrorBody(error: unknown, request: FastifyRequest): unknown {
  const known = toKnownError(error, 0);
  if (known instanceof AppError) {
    if (known.status >= 500) request.log.warn({ err: error }, 'streamed response failed');
    return errorBody(shapeOf(request), known);
  }
  if (known) return errorBody(shapeOf(request), errors.invalidRequest(known.message));
  request.log.error({ err: error }, 'unhandled error in a streamed response');
  return errorBody(shapeOf(request), errors.internal());
}

/** Errors Fastify raises before routing: an undecodable path, a path parameter past its length. */
export function handleFrameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const known =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? errors.uriTooLong()
      : error.code === 'FST_ERR_BAD_URL'
        ? errors.invalidRequest('The URL path is not valid: a percent-escape does not decode to UTF-8')
        : errors.invalidRequest(error.message);
  reply.status(known.status).send(errorBody('envelope', known));
}

/** Requests Node's HTTP parser refuses (headers too large, malformed, too slow), in the envelope too. */
export function handleClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const known =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? errors.headersTooLarge()
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? errors.requestTimeout()
        : errors.invalidRequest('The HTTP request is malformed');
  if (socket.writable) socket.write(rawAnswer(known.status, JSON.stringify(errorBody('envelope', known))));
  socket.destroy(error);
}
