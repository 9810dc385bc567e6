// Large request bodies are parsed on the JSON thread: the same value as JSON.parse makes (an own
// "__proto__" key, -0, deep objects within the limit), and the same 422s as a parse on the
// request's thread (too deep, malformed, text the store cannot hold), for small bodies and large.
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { parseRequestJsonAsync, THREAD_PARSE_CHARS } from '../../src/http/json-thread.js';
import { MAX_JSON_DEPTH, parseRequestJson } from '../../src/text/json-text.js';

/** A body like a precomputed embedding's, padded past the thread's threshold. */
function body(extra: string): string {
  const embedding = Array.from({ length: 1536 }, (_, i) => Math.sin(i + 1) / 7);
  const text = `{"embedding":${JSON.stringify(embedding)},"content":"A page.",${extra}}`;
  expect(text.length).toBeGreaterThan(THREAD_PARSE_CHARS);
  return text;
}

/** What a parse answers: its value, or its error's issues. */
async function outcome(parse: () => unknown): Promise<unknown> {
  try {
    return { value: await parse() };
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return { issues: (error as ValidationError).issues };
  }
}

describe('parseRequestJsonAsync', () => {
  const texts = [
    body('"metadata":{"__proto__":{"polluted":true},"zero":-0,"deep":' + '{"a":'.repeat(20) + '1' + '}'.repeat(20) + '}'),
    body('"metadata":' + '['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH)),
    body('"broken":'),
    body('"metadata":{"note":"nul \\u0000 here"}'),
    body('"metadata":{"note":"lone \\ud800 surrogate"}'),
    '{"query":"small","alpha":0.5}',
    '{"query":',
  ];

  it('answers as the parse on the request’s thread does, value or error', async () => {
    for (const text of texts) {
      for (const options of [{}, { checkText: false }, { maxDepth: 2 * MAX_JSON_DEPTH }]) {
        const here = await outcome(() => parseRequestJson(text, [], options));
        const there = await outcome(() => parseRequestJsonAsync(text, options));
        expect(there).toEqual(here);
      }
    }
    const polluted = (await parseRequestJsonAsync(texts[0], {})) as { metadata: Record<string, unknown> };
    expect(Object.getPrototypeOf(polluted.metadata)).toBe(Object.prototype);
    expect(Object.keys(polluted.metadata)).toEqual(['__proto__', 'zero', 'deep']);
    expect(Object.is(polluted.metadata.zero, -0)).toBe(true);
  });

  it('parses many bodies at once, each to its own value', async () => {
    const many = Array.from({ length: 40 }, (_, i) => body(`"external_id":"doc-${i}"`));
    const values = (await Promise.all(many.map((text) => parseRequestJsonAsync(text, {})))) as { external_id: string }[];
    expect(values.map((v) => v.external_id)).toEqual(many.map((_, i) => `doc-${i}`));
  });
});
