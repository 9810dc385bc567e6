// PostgreSQL text and jsonb refuse NUL characters and lone UTF-16 surrogates; catch them at
// the door so they answer 422 instead of failing inside the store.
import { ValidationError, type ValidationIssue } from '../errors.js';

// eslint-disable-next-line no-control-regex
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function collect(value: unknown, loc: string[], issues: ValidationIssue[]): void {
  if (issues.length >= 10) return;
  if (typeof value === 'string') {
    if (UNSTORABLE.test(value)) {
      issues.push({ loc, msg: 'String must not contain NUL characters or unpaired surrogates', type: 'string_unicode' });
    }
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => collect(item, [...loc, String(i)], issues));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (UNSTORABLE.test(key)) {
        issues.push({ loc: [...loc, key], msg: 'Key must not contain NUL characters or unpaired surrogates', type: 'string_unicode' });
      }
      collect(item, [...loc, key], issues);
    }
  }
}

/** Throws a 422 naming every string in `value` that the store cannot hold. */
export function assertStorableText(value: unknown, loc: string[]): void {
  const issues: ValidationIssue[] = [];
  collect(value, loc, issues);
  if (issues.length > 0) throw new ValidationError(issues);
}
