// The offline optimiser's pure parts: catalogue values found in a question (whole words,
// case-insensitive, longest mention first), the filter made of them, the values a filter
// covers, and their removal from the text.
import { describe, expect, it } from 'vitest';
import type { Catalogue } from '../../src/answer/catalogue.js';
import { combineFilters, coveredValues, filterFromMatches, matchCatalogue, removeCovered } from '../../src/answer/optimize.js';
import { findWholeWord, stem, stripMarkdown } from '../../src/answer/text.js';

function catalogue(fields: Record<string, (string | number | boolean)[]>, arrays: string[] = []): Catalogue {
  return {
    documents: 10,
    fields: Object.entries(fields).map(([name, values]) => ({
      name,
      types: { [arrays.includes(name) ? 'array' : typeof values[0]]: values.length },
      documents: values.length,
      values: values.map((value, i) => ({ value, count: values.length - i, inArray: arrays.includes(name) })),
    })),
  };
}

const derive = (text: string, cat: Catalogue) => filterFromMatches(matchCatalogue(text, cat));

describe('catalogue matcher', () => {
  const cat = catalogue({ department: ['finance', 'legal'], year: [2022, 2023] });

  it('finds the values a question names (the example of the issue)', () => {
    const question = 'What did the 2023 finance report say about revenue?';
    const filter = derive(question, cat);
    expect(filter).toEqual({ department: 'finance', year: 2023 });
    expect(removeCovered(question, coveredValues(filter))).toBe('What did the report say about revenue?');
  });

  it('matches case-insensitively and only whole words', () => {
    expect(derive('FINANCE numbers', cat)).toEqual({ department: 'finance' });
    expect(derive('refinanced loans and financed deals', cat)).toBeNull();
    expect(derive('the 20230 budget, the 2023.5 release, version 12023', cat)).toBeNull();
    expect(derive('nothing to see', cat)).toBeNull();
  });

  it('makes $in of several values of one field and $containsAny for array fields', () => {
    expect(derive('compare the finance and legal reports', cat)).toEqual({ department: { $in: ['finance', 'legal'] } });
    const tags = catalogue({ tags: ['urgent', 'q3 review'] }, ['tags']);
    expect(derive('urgent items from the Q3  review', tags)).toEqual({ tags: { $containsAny: ['urgent', 'q3 review'] } });
  });

  it('prefers the longest mention, then the most frequent value', () => {
    const cities = catalogue({ city: ['York', 'New York'], region: ['New York'] });
    const matches = matchCatalogue('offices in New York', cities);
    expect(matches).toHaveLength(1);
    expect(matches[0]).toMatchObject({ value: 'New York' });
  });

  it('matches short values and function words only next to their field name', () => {
    const cat2 = catalogue({ version: [2, 3], grade: ['a', 'b'], draft: [true, false] });
    expect(derive('what changed in 2 weeks', cat2)).toBeNull();
    expect(derive('what changed in version 2', cat2)).toEqual({ version: 2 });
    expect(derive('a question', cat2)).toBeNull();
    expect(derive('papers with grade a', cat2)).toEqual({ grade: 'a' });
    // Booleans are never matched from text.
    expect(derive('is draft true', cat2)).toBeNull();
  });

  it('reads field names written with underscores or camelCase', () => {
    const cat3 = catalogue({ doc_type: ['memo', 'contract'], fiscalQuarter: [1, 2] });
    expect(derive('the memo from fiscal quarter 2', cat3)).toEqual({ doc_type: 'memo', fiscalQuarter: 2 });
  });
});

describe('covered values and their removal', () => {
  it('collects equality, $eq, $in, $contains and $containsAny, also under $and', () => {
    expect(
      coveredValues({
        a: 'x',
        b: { $eq: 2 },
        c: { $in: ['p', 'q'] },
        d: { $contains: ['t'] },
        e: { $containsAny: ['u'] },
        f: { $gt: 5 },
        $or: [{ g: 'no' }],
        $and: [{ h: 'yes' }],
      }),
    ).toEqual([
      { field: 'a', value: 'x' },
      { field: 'b', value: 2 },
      { field: 'c', value: 'p' },
      { field: 'c', value: 'q' },
      { field: 'd', value: 't' },
      { field: 'e', value: 'u' },
      { field: 'h', value: 'yes' },
    ]);
    expect(coveredValues(null)).toEqual([]);
  });

  it('removes connectors between removed values and "field: value" forms', () => {
    const covered = [
      { field: 'department', value: 'finance' },
      { field: 'department', value: 'legal' },
      { field: 'year', value: 2023 },
    ];
    expect(removeCovered('Revenue in finance and legal for 2023?', covered)).toBe('Revenue in for?');
    expect(removeCovered('department: finance revenue growth', covered)).toBe('revenue growth');
  });

  it('removes short values only with their field name', () => {
    expect(removeCovered('a summary of version 2', [{ field: 'version', value: 2 }])).toBe('a summary of');
    expect(removeCovered('a summary in 2 lines', [{ field: 'version', value: 2 }])).toBe('a summary in 2 lines');
  });

  it('keeps the text when nothing with content would be left', () => {
    expect(removeCovered('finance 2023?', [{ field: 'department', value: 'finance' }, { field: 'year', value: 2023 }])).toBe('finance 2023?');
  });

  it('combines the caller filter with a derived one', () => {
    expect(combineFilters(null, null)).toBeNull();
    expect(combineFilters({}, null)).toBeNull();
    expect(combineFilters({ a: 1 }, null)).toEqual({ a: 1 });
    expect(combineFilters(null, { b: 2 })).toEqual({ b: 2 });
    expect(combineFilters({ a: 1 }, { b: 2 })).toEqual({ $and: [{ a: 1 }, { b: 2 }] });
  });
});

describe('text helpers', () => {
  it('finds whole words across whitespace', () => {
    expect(findWholeWord('New\n York and newyork', 'new york')).toEqual([{ start: 0, end: 9 }]);
    expect(findWholeWord('C++ and c', 'c++')).toEqual([{ start: 0, end: 3 }]);
  });

  it('stems plurals and verb forms lightly', () => {
    expect(['payments', 'signed', 'running', 'parties', 'boxes', 'class', 'status'].map(stem)).toEqual([
      'payment', 'sign', 'run', 'party', 'box', 'class', 'status',
    ]);
  });

  it('strips Markdown syntax', () => {
    expect(stripMarkdown('## Title\n- use **ctrl-r** and `man bash`, see [docs](http://x) _now_')).toBe('Title\nuse ctrl-r and man bash, see docs now');
  });
});
