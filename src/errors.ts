// The error catalogue: every error code of decisions.md with its HTTP status, and factories
// that services throw. One renderer (http/errors.ts) turns them into response bodies.

export const ERROR_STATUS = {
  INVALID_REQUEST: 400,
  INVALID_FILTER: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  RESOURCE_NOT_FOUND: 404,
  REQUEST_TIMEOUT: 408,
  PAYLOAD_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  UNSUPPORTED_MEDIA_TYPE: 415,
  HEADERS_TOO_LARGE: 431,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;

  constructor(code: ErrorCode, message: string) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_STATUS[code];
  }
}

/** One problem of an input, at the path of its field (['metadata', 'tags', '0']; [] is the input itself). */
export interface FieldIssue {
  path: string[];
  msg: string;
  type: string;
}

/** Input that breaks a rule; the HTTP layer locates each path in the request and answers 422. */
export class ValidationError extends Error {
  readonly issues: FieldIssue[];

  constructor(issues: FieldIssue[]) {
    super(issues.map((i) => `${i.path.join('.')}: ${i.msg}`).join('; '));
    this.name = 'ValidationError';
    this.issues = issues;
  }
}

export const errors = {
  invalidRequest: (message: string) => new AppError('INVALID_REQUEST', message),
  invalidFilter: (path: string, message: string) =>
    new AppError('INVALID_FILTER', path ? `${path}: ${message}` : message),
  unauthorized: (message = 'A valid X-API-Key header is required') => new AppError('UNAUTHORIZED', message),
  forbidden: (scope: string) => new AppError('FORBIDDEN', `This API key lacks the "${scope}" scope`),
  notFound: (what: string) => new AppError('RESOURCE_NOT_FOUND', `${what} not found`),
  payloadTooLarge: (limitBytes: number) =>
    new AppError('PAYLOAD_TOO_LARGE', `Request body exceeds the limit of ${limitBytes} bytes`),
  tooManyFormParts: () =>
    new AppError('PAYLOAD_TOO_LARGE', 'The multipart form has too many parts: send one file and only the documented fields'),
  unsupportedMediaType: (message: string) => new AppError('UNSUPPORTED_MEDIA_TYPE', message),
  uriTooLong: () => new AppError('URI_TOO_LONG', 'A path parameter of the URL is too long'),
  headersTooLarge: () => new AppError('HEADERS_TOO_LARGE', 'The request headers are too large'),
  requestTimeout: () => new AppError('REQUEST_TIMEOUT', 'The request was not received in time'),
  rateLimited: (retryAfterSeconds: number) =>
    new AppError('RATE_LIMIT_EXCEEDED', `Rate limit exceeded; retry in ${retryAfterSeconds} s`),
  internal: () => new AppError('INTERNAL_ERROR', 'Internal server error'),
  unavailable: (message: string) => new AppError('SERVICE_UNAVAILABLE', message),
  validation: (path: string[], msg: string, type = 'value_error') => new ValidationError([{ path, msg, type }]),
};

/** A failure of background work with a message for the user; `transient` ones are retried with backoff. */
export class TaskError extends Error {
  constructor(
    message: string,
    readonly transient = false,
  ) {
    super(message);
    this.name = 'TaskError';
  }
}
