// PostgreSQL text and jsonb refuse NUL characters and lone UTF-16 surrogates, and deeply
// nested JSON overflows the stack of every recursive reader after it (ours, Ajv, the
// drivers); catch both at the door so they answer 422 instead of failing inside the store.
import { ValidationError, type FieldIssue } from '../errors.js';

/** The deepest nesting of arrays and objects a request may send. */
export const MAX_JSON_DEPTH = 64;

const MAX_ISSUES = 10;

/** Whether PostgreSQL can store the string as text. */
export function isStorableText(text: string): boolean {
  return text.isWellFormed() && !text.includes('\u0000');
}

interface Visit {
  value: unknown;
  key: string;
  parent: Visit | null;
  depth: number;
}

function pathOf(visit: Visit, base: string[]): string[] {
  const keys: string[] = [];
  for (let v: Visit | null = visit; v?.parent; v = v.parent) keys.push(v.key);
  return [...base, ...keys.reverse()];
}

/**
 * The strings in `value` the store cannot hold, and nesting deeper than MAX_JSON_DEPTH.
 * Iterative, so a body nested 100,000 levels deep is answered rather than overflowing; a
 * path is built only for what is reported, so a large body costs no garbage. `base` is the
 * path of `value` itself.
 */
export function jsonTextIssues(value: unknown, base: string[]): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const badString = (visit: Visit, msg: string) => issues.push({ path: pathOf(visit, base), msg, type: 'string_unicode' });
  const stack: Visit[] = [{ value, key: '', parent: null, depth: 0 }];
  while (stack.length > 0 && issues.length < MAX_ISSUES) {
    const visit = stack.pop()!;
    if (typeof visit.value === 'string') {
      if (!isStorableText(visit.value)) badString(visit, 'String must not contain NUL characters or unpaired surrogates');
      continue;
    }
    if (visit.value === null || typeof visit.value !== 'object') continue;
    if (visit.depth >= MAX_JSON_DEPTH) {
      issues.push({ path: pathOf(visit, base), msg: `JSON is nested deeper than ${MAX_JSON_DEPTH} levels`, type: 'json_too_deep' });
      break;
    }
    const depth = visit.depth + 1;
    const push = (key: string, child: unknown) => {
      if (typeof child === 'string' || (typeof child === 'object' && child !== null)) stack.push({ value: child, key, parent: visit, depth });
    };
    if (Array.isArray(visit.value)) {
      const items: unknown[] = visit.value;
      for (let i = items.length - 1; i >= 0; i--) {
        // Numbers, booleans and nulls need no check and no name: a 500,000-element array stays cheap.
        if (typeof items[i] === 'string' || (typeof items[i] === 'object' && items[i] !== null)) push(String(i), items[i]);
      }
    } else {
      const entries = Object.entries(visit.value as object);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i];
        if (!isStorableText(key)) badString({ value: key, key, parent: visit, depth }, 'Key must not contain NUL characters or unpaired surrogates');
        push(key, child);
      }
    }
  }
  return issues.slice(0, MAX_ISSUES);
}

/** Whether the text has at most `max` of `[` and `{` in all, strings included (a native search, not a walk). */
function opensAtMost(text: string, max: number): boolean {
  let opens = 0;
  for (const bracket of ['[', '{']) {
    for (let i = text.indexOf(bracket); i !== -1; i = text.indexOf(bracket, i + 1)) {
      if (++opens > max) return false;
    }
  }
  return true;
}

/** What the nesting walk stops at: a string's start and the brackets; within a string, its end or an escape. */
const STRUCTURE = /["[\]{}]/g;
const STRING_STOP = /["\\]/g;

/** Whether a JSON text nests arrays and objects deeper than `max`, found without parsing it. */
export function nestsDeeperThan(text: string, max: number): boolean {
  // Most bodies open few arrays and objects: then they cannot nest deeper, and the walk below
  // is not needed.
  if (opensAtMost(text, max)) return false;
  // The walk hops from one character that matters to the next with native searches: a batch of
  // 500 embeddings (9 MB) took 120-200 ms going character by character, as long as parsing it,
  // and takes 25-50 ms so.
  let depth = 0;
  STRUCTURE.lastIndex = 0;
  for (let found = STRUCTURE.exec(text); found !== null; found = STRUCTURE.exec(text)) {
    const c = text.charCodeAt(found.index);
    if (c === 0x22) {
      // A string: on to its closing quote, over escapes; an unclosed one ends the walk (JSON.parse refuses it).
      STRING_STOP.lastIndex = found.index + 1;
      for (let stop = STRING_STOP.exec(text); ; stop = STRING_STOP.exec(text)) {
        if (stop === null) return false;
        if (text.charCodeAt(stop.index) === 0x22) {
          STRUCTURE.lastIndex = stop.index + 1;
          break;
        }
        STRING_STOP.lastIndex = stop.index + 2;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else {
      depth--;
    }
  }
  return false;
}

export interface JsonParseOptions {
  /** The deepest nesting the text may have; MAX_JSON_DEPTH unless given. */
  maxDepth?: number;
  /**
   * Whether strings the store cannot hold are refused here (unless false): a body whose parts
   * are answered one by one checks each part itself (`jsonTextIssues`).
   */
  checkText?: boolean;
}

/**
 * Parses a JSON request text the store can hold, or throws a 422 at field `path`:
 * json_too_deep before parsing (V8 takes 200 ms to refuse a megabyte of `[`), json_invalid,
 * string_unicode.
 */
export function parseRequestJson(text: string, path: string[], { maxDepth = MAX_JSON_DEPTH, checkText = true }: JsonParseOptions = {}): unknown {
  if (nestsDeeperThan(text, maxDepth)) {
    throw new ValidationError([{ path, msg: `JSON is nested deeper than ${maxDepth} levels`, type: 'json_too_deep' }]);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ValidationError([{ path, msg: `JSON decode error: ${(error as Error).message}`, type: 'json_invalid' }]);
  }
  // A parsed string holds NUL or a lone surrogate only through a \u escape (JSON refuses raw
  // control characters) or when the text itself holds a lone surrogate; most bodies have
  // neither, and a body of 1536 numbers then skips the walk.
  if (checkText && (text.includes('\\u') || !text.isWellFormed())) assertStorableText(parsed, path);
  return parsed;
}

/** Throws a 422 naming every string in `value` that the store cannot hold, or a too-deep nesting. */
export function assertStorableText(value: unknown, path: string[]): void {
  const issues = jsonTextIssues(value, path);
  if (issues.length > 0) throw new ValidationError(issues);
}
