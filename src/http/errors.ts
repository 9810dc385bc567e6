// The single error renderer: every failure leaves the service through here, in the
// documented shape (envelope, bare service error, or 422 detail), never with a stack trace.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ValidationError, errors } from '../errors.js';
import { errorBody, validationBody, type ResponseShape } from './envelope.js';

function shapeOf(request: FastifyRequest): ResponseShape {
  return request.routeOptions?.config?.shape ?? 'envelope';
}

// PostgreSQL error codes that mean the request, not the service, is at fault.
function fromDatabaseError(error: { code?: string; message?: string }): AppError | null {
  switch (error.code) {
    case '2201B':
      return errors.invalidFilter('', `invalid regular expression: ${error.message ?? ''}`);
    case '22P02':
    case '22003':
    case '22007':
    case '22008':
      return errors.invalidRequest(`invalid value: ${error.message ?? ''}`);
    case '57014':
      return errors.unavailable('The query took too long and was cancelled');
    case 'ECONNREFUSED':
    case 'ECONNRESET':
    case 'ETIMEDOUT':
    case '53300':
    case '57P01':
    case '57P02':
    case '57P03':
      return errors.unavailable('The database is unavailable; try again shortly');
    default:
      return error.code?.startsWith('08') ? errors.unavailable('The database connection failed; try again shortly') : null;
  }
}

function fromFastifyError(error: FastifyError, bodyLimit: number): AppError | ValidationError | null {
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
      return new ValidationError([{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
    default:
      if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
        return errors.invalidRequest(error.message);
      }
      return null;
  }
}

export function toKnownError(error: unknown, bodyLimit: number): AppError | ValidationError | null {
  if (error instanceof AppError || error instanceof ValidationError) return error;
  if (typeof error !== 'object' || error === null) return null;
  const candidate = error as FastifyError & { code?: string };
  if (typeof candidate.code === 'string' && candidate.code.startsWith('FST_')) {
    return fromFastifyError(candidate, bodyLimit);
  }
  return fromDatabaseError(candidate);
}

export function createErrorHandler(bodyLimit: number) {
  return function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const known = toKnownError(error, bodyLimit);
    if (known instanceof ValidationError) {
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
