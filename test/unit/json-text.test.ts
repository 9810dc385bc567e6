// The depth check every JSON request body passes before it is parsed: exact at the limit,
// whether a body opens few brackets (answered without walking it) or many. Then the text check:
// what PostgreSQL cannot store is refused wherever it sits, escaped or not.
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { MAX_JSON_DEPTH, isStorableText, nestsDeeperThan, parseRequestJson } from '../../src/text/json-text.js';

const nested = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;

describe('nestsDeeperThan', () => {
  it('is exact at the limit', () => {
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true);
    expect(nestsDeeperThan(`{"a":${nested(MAX_JSON_DEPTH - 1)}}`, MAX_JSON_DEPTH)).toBe(false);
    expect(nestsDeeperThan(`{"a":${nested(MAX_JSON_DEPTH)}}`, MAX_JSON_DEPTH)).toBe(true);
  });

  it('counts depth, not brackets, in a body that opens many', () => {
    const shallow = `{"rows":[${Array.from({ length: 500 }, (_, i) => `{"n":[${i}]}`).join(',')}]}`;
    expect(nestsDeeperThan(shallow, MAX_JSON_DEPTH)).toBe(false);
    expect(nestsDeeperThan(`[${shallow},${nested(MAX_JSON_DEPTH)}]`, MAX_JSON_DEPTH)).toBe(true);
  });

  it('skips brackets inside strings, escaped quotes included', () => {
    const text = `["${'['.repeat(200)}\\"${'{'.repeat(200)}", {"k${'['.repeat(100)}": 1}]`;
    expect(JSON.parse(text)).toHaveLength(2);
    expect(nestsDeeperThan(text, MAX_JSON_DEPTH)).toBe(false);
  });

  it('agrees with a walk of every character on texts of strings, escapes and brackets, closed or not', () => {
    // The reference: one character at a time, strings skipped over their escapes.
    const reference = (text: string, max: number) => {
      let depth = 0;
      for (let i = 0; i < text.length; i++) {
        const c = text[i];
        if (c === '"') {
          for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
        } else if (c === '[' || c === '{') {
          if (++depth > max) return true;
        } else if (c === ']' || c === '}') {
          depth--;
        }
      }
      return false;
    };
    let seed = 3;
    const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const pieces = ['[', '[', '{', ']', '}', '"', '"', '\\', '\\"', '"\\\\"', 'a', '1,', ':'];
    for (let round = 0; round < 3000; round++) {
      let text = '';
      const length = 1 + random(80);
      for (let i = 0; i < length; i++) text += pieces[random(pieces.length)];
      const max = 1 + random(6);
      expect(nestsDeeperThan(text, max), text).toBe(reference(text, max));
    }
  });
});

describe('isStorableText', () => {
  it.each([
    ['plain', 'plain text', true],
    ['non-ASCII', 'café ’quotes’ 日本', true],
    ['a surrogate pair', 'emoji \uD83D\uDE00 here', true],
    ['NUL', 'a\u0000b', false],
    ['a lone high surrogate', 'a\uD83Db', false],
    ['a lone high surrogate at the end', 'a\uD83D', false],
    ['a lone low surrogate', 'a\uDE00b', false],
    ['a reversed pair', '\uDE00\uD83D', false],
  ])('%s', (_name, text, storable) => {
    expect(isStorableText(text)).toBe(storable);
  });
});

describe('parseRequestJson', () => {
  const issuesOf = (text: string) => {
    try {
      parseRequestJson(text, ['body']);
    } catch (error) {
      if (error instanceof ValidationError) return error.issues.map((issue) => [issue.path.join('.'), issue.type]);
      throw error;
    }
    return [];
  };

  it('parses a body with nothing to refuse', () => {
    const text = JSON.stringify({ embedding: [0.5, -1e-7, 3], content: 'café \uD83D\uDE00', metadata: { k: ['v'] } });
    expect(parseRequestJson(text, [])).toEqual(JSON.parse(text));
    expect(parseRequestJson(String.raw`{"a":"\\u0000 is text, not an escape"}`, [])).toEqual({ a: String.raw`\u0000 is text, not an escape` });
  });

  it('refuses NUL and lone surrogates written as escapes, in values and keys', () => {
    expect(issuesOf('{"content":"a\\u0000b"}')).toEqual([['body.content', 'string_unicode']]);
    expect(issuesOf('{"m":{"x":["ok","\\ud800"]}}')).toEqual([['body.m.x.1', 'string_unicode']]);
    expect(issuesOf('{"m":{"k\\u0000":1}}')).toEqual([['body.m.k\u0000', 'string_unicode']]);
  });

  it('refuses a lone surrogate the text itself holds', () => {
    expect(issuesOf('{"content":"a\uD800b"}')).toEqual([['body.content', 'string_unicode']]);
  });

  it('refuses a raw NUL as invalid JSON', () => {
    expect(issuesOf('{"content":"a\u0000b"}')).toEqual([['body', 'json_invalid']]);
  });
});
