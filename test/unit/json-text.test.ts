// The depth check every JSON request body passes before it is parsed: exact at the limit,
// whether a body opens few brackets (answered without walking it) or many.
import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../src/text/json-text.js';

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
});
