// Reading the answer field of a model's JSON reply while it streams: the decoded text, told as
// each piece completes it, the same however the JSON is split; top-level literals; what is not
// the field (nested keys, other strings, a Markdown fence) left out.
import { describe, expect, it } from 'vitest';
import { PartialJsonField } from '../../src/answer/partial-json.js';

function read(pieces: string[], field = 'answer') {
  const told: string[] = [];
  const reader = new PartialJsonField(field, (text) => told.push(text));
  for (const piece of pieces) reader.push(piece);
  return { told, text: told.join(''), literals: reader.literals };
}

/** Every split of `json` into two and three pieces, and one character at a time. */
function splits(json: string): string[][] {
  const out: string[][] = [[json], Array.from(json)];
  for (let i = 0; i <= json.length; i++) {
    out.push([json.slice(0, i), json.slice(i)]);
    for (let j = i; j <= json.length; j += 3) out.push([json.slice(0, i), json.slice(i, j), json.slice(j)]);
  }
  return out;
}

describe('PartialJsonField', () => {
  it('decodes the field however the text is split', () => {
    const reply = {
      answerable: true,
      citations: [{ passage: 2, quote: 'not "this"', answer: 'nested, not this' }],
      answer: 'Line one\nsaid "two" \\ tab\there: é, 日本, 😀 \u2028 [1].',
      extra: { answer: 'also not this' },
    };
    for (const json of [JSON.stringify(reply), JSON.stringify(reply, null, 2), JSON.stringify(reply).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)]) {
      for (const pieces of splits(json)) {
        const { text } = read(pieces);
        expect(text, JSON.stringify(pieces)).toBe(reply.answer);
      }
    }
  });

  it('tells text as it comes, holding back only half of a surrogate pair', () => {
    expect(read(['{"answer": "The ', 'White Rab', 'bit", "x": 1}']).told).toEqual(['The ', 'White Rab', 'bit']);
    expect(read(['{"answer": "a\\ud83d', '\\ude00b"}']).told).toEqual(['a', '😀b']);
    expect(read(['{"answer": "a\\u00', 'e9"}']).told).toEqual(['a', 'é']);
    expect(read(['{"answer": "', '"}']).told).toEqual([]);
  });

  it('records the top-level literals once complete', () => {
    const { literals, text } = read(['{"answerable": fal', 'se, "n": -1.5e3 , "z": null, "answer": "no"}']);
    expect(Object.fromEntries(literals)).toEqual({ answerable: 'false', n: '-1.5e3', z: 'null' });
    expect(text).toBe('no');
    expect(read(['{"answerable":tru']).literals.has('answerable')).toBe(false);
    expect(read(['{"answerable":true}']).literals.get('answerable')).toBe('true');
  });

  it('skips a Markdown fence before the object and ignores anything after it', () => {
    expect(read(['```json\n{"answer": "fenced"}\n```', '{"answer": "second"}']).text).toBe('fenced');
    expect(read(['no object at all']).text).toBe('');
  });
});
