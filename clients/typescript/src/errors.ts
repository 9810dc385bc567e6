// The errors the client throws: FolioError for an error response of the API, and two for
// a task that did not complete. Network failures and aborts stay fetch's own errors.
import type { TaskStatus } from './types.js';

/** One problem of a rejected request (422), located in it: `['body', 'embedding']`. */
export interface ValidationIssue {
  loc: string[];
  msg: string;
  type: string;
}

/**
 * An error response. `errorCode` is the API's `error_code` (`RESOURCE_NOT_FOUND`,
 * `UNAUTHORIZED`, ...); a 422 carries none, so it is `VALIDATION_ERROR` with the problems in
 * `detail`, and a body that is not Folio's (a proxy's error page) gives `HTTP_ERROR`.
 */
export class FolioError extends Error {
  override readonly name = 'FolioError';

  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
    readonly detail?: ValidationIssue[],
  ) {
    super(message);
  }

  /** Reads the error from a response body in any of the API's shapes. */
  static fromResponse(status: number, body: unknown): FolioError {
    if (isObject(body)) {
      if (Array.isArray(body.detail)) {
        const detail = body.detail as ValidationIssue[];
        return new FolioError(status, 'VALIDATION_ERROR', detail.map((d) => `${d.loc.join('.')}: ${d.msg}`).join('; '), detail);
      }
      // The envelope holds the service error under `error`; bare and `{data}` routes answer it alone.
      const error = isObject(body.error) ? body.error : body;
      if (typeof error.error_code === 'string') return new FolioError(status, error.error_code, String(error.message ?? error.error_code));
    }
    return new FolioError(status, 'HTTP_ERROR', typeof body === 'string' && body ? body.slice(0, 500) : `HTTP ${status}`);
  }
}

/** waitForTask: the task ended FAILED; `task.message` says why. */
export class FolioTaskFailedError extends Error {
  override readonly name = 'FolioTaskFailedError';

  constructor(
    readonly taskId: string,
    readonly task: TaskStatus,
  ) {
    super(`Task ${taskId} failed: ${task.message}`);
  }
}

/** waitForTask: the task had not ended within `timeoutMs`; `task` is the last status read. */
export class FolioTaskTimeoutError extends Error {
  override readonly name = 'FolioTaskTimeoutError';

  constructor(
    readonly taskId: string,
    readonly timeoutMs: number,
    readonly task: TaskStatus | undefined,
  ) {
    super(`Task ${taskId} did not end within ${timeoutMs} ms${task ? ` (${task.status}, ${task.progress}%: ${task.message})` : ''}`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
