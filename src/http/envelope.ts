// The response envelope of decisions.md and the shapes of error bodies.
import type { AppError } from '../errors.js';
import { VERSION } from '../version.js';
import type { RequestValidationError } from './validation.js';

/** How a route answers: inside the envelope, as the bare object, or as `{data}`. */
export type ResponseShape = 'envelope' | 'bare' | 'data';

export interface Envelope<T> {
  data: T | null;
  success: boolean;
  error: { error_code: string; message: string } | null;
  meta: { timestamp: string; version: string };
}

function meta(): Envelope<unknown>['meta'] {
  return { timestamp: new Date().toISOString(), version: VERSION };
}

export interface SuccessEnvelope<T> extends Envelope<T> {
  data: T;
  success: true;
  error: null;
}

export function envelope<T>(data: T): SuccessEnvelope<T> {
  return { data, success: true, error: null, meta: meta() };
}

export function errorBody(shape: ResponseShape, error: AppError): unknown {
  const serviceError = { error_code: error.code, message: error.message };
  if (shape !== 'envelope') return serviceError;
  return { data: null, success: false, error: serviceError, meta: meta() } satisfies Envelope<null>;
}

export function validationBody(error: RequestValidationError): { detail: RequestValidationError['issues'] } {
  return { detail: error.issues };
}
