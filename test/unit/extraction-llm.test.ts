// Extraction with a language model, through the OpenAI-compatible client against the local
// fake server: the document cut into parts within the prompt budget, one structured-output
// request per part, answers normalised and checked against the schema, invalid answers asked
// again and finally refused with a clear failure, parts merged (votes for one record;
// overlaps and cut records reconciled for many), record counts reconciled.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ExtractionFailure, extractWithLlm } from '../../src/extraction/llm.js';
import { normaliseRecord } from '../../src/extraction/llm/answer.js';
import { canonical, mergeRecords, mergeSingle } from '../../src/extraction/llm/merge.js';
import { splitIntoParts } from '../../src/extraction/llm/parts.js';
import { describeSchema } from '../../src/extraction/schema.js';
import { createOpenAIChatProvider, estimateTokens, type LlmProvider } from '../../src/providers/llm/index.js';
import { FakeOpenAI, type FakeChatBody } from '../helpers/fake-openai.js';

const PAPER = {
  type: 'object',
  properties: {
    title: { type: 'string', description: 'Title of the paper' },
    published: { type: 'string', format: 'date' },
    price: { type: 'number', minimum: 0, description: 'Price in dollars' },
    pages: { type: 'integer' },
    open_access: { type: 'boolean' },
    keywords: { type: 'array', items: { type: 'string' } },
  },
  required: ['title'],
};

const ITEMS = {
  type: 'object',
  properties: { name: { type: 'string' }, price: { type: 'number', description: 'Unit price' } },
  required: ['name'],
};

let fake: FakeOpenAI;
let llm: LlmProvider;

function documentText(body: FakeChatBody): string {
  const user = body.messages.find((m) => m.role === 'user')?.content ?? '';
  return user.slice(user.indexOf('<<<'));
}

beforeAll(async () => {
  fake = await FakeOpenAI.start();
  llm = createOpenAIChatProvider({ model: 'fake-model', baseUrl: fake.baseUrl, apiKey: 'sk-test', retryBaseMs: 5, maxAttempts: 2, promptTokenBudget: 1200 });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
});

describe('parts', () => {
  it('cuts a document at paragraphs into parts within the budget, marks pages and overlaps', () => {
    const pages = Array.from({ length: 6 }, (_, p) => Array.from({ length: 8 }, (_, i) => `Paragraph ${i + 1} of page ${p + 1}. ${'Lorem ipsum dolor sit amet. '.repeat(6)}`).join('\n\n'));
    const parts = splitIntoParts(pages, 500);
    expect(parts.length).toBeGreaterThan(5);
    for (const part of parts) expect(estimateTokens(part.text)).toBeLessThanOrEqual(500 + 60);
    expect(parts[0].text.startsWith('[Page 1]\nParagraph 1 of page 1.')).toBe(true);
    expect(parts[0].firstPage).toBe(1);
    expect(parts.at(-1)!.lastPage).toBe(6);
    // Every paragraph is in some part, in order; each part starts with the end of the previous one.
    const all = parts.map((p) => p.text).join('\n');
    for (let p = 1; p <= 6; p++) for (let i = 1; i <= 8; i++) expect(all).toContain(`Paragraph ${i} of page ${p}.`);
    for (let i = 1; i < parts.length; i++) {
      const tail = parts[i - 1].text.slice(-100);
      expect(parts[i].text).toContain(tail.slice(tail.indexOf(' ') + 1));
    }
  });

  it('cuts a paragraph longer than a part at line ends', () => {
    const long = Array.from({ length: 400 }, (_, i) => `line ${i} of a table without blank lines`).join('\n');
    const parts = splitIntoParts([long], 300);
    expect(parts.length).toBeGreaterThan(5);
    for (const part of parts) expect(estimateTokens(part.text)).toBeLessThanOrEqual(300 + 200);
    expect(parts.map((p) => p.text).join('\n')).toContain('line 399 of a table');
  });
});

describe('merging', () => {
  const specs = describeSchema(PAPER);

  it('votes per field across parts, the earliest wins a tie, lists are united', () => {
    expect(
      mergeSingle(specs, [
        { title: 'A', keywords: ['x', 'y'] },
        { title: 'B', price: 5, keywords: ['y', 'z'] },
        { title: 'B', pages: 3 },
        { price: 6 },
      ]),
    ).toEqual({ title: 'B', price: 5, pages: 3, keywords: ['x', 'y', 'z'] });
  });

  it('drops the records an overlap repeats and joins a record cut by a boundary', () => {
    const merged = mergeRecords([
      [{ name: 'a', price: 1 }, { name: 'b', price: 2 }, { name: 'c' }],
      [{ name: 'b', price: 2 }, { name: 'c', price: 3 }, { name: 'd', price: 4 }],
      [{ name: 'd', price: 4 }, { name: 'e', price: 5 }],
    ]);
    expect(merged).toEqual([
      { name: 'a', price: 1 },
      { name: 'b', price: 2 },
      { name: 'c', price: 3 },
      { name: 'd', price: 4 },
      { name: 'e', price: 5 },
    ]);
    // Equal rows inside one part are kept: they are two records.
    expect(mergeRecords([[{ name: 'a' }, { name: 'a' }]])).toHaveLength(2);
    expect(canonical({ b: 1, a: [{ d: 1, c: 2 }] })).toBe('{"a":[{"c":2,"d":1}],"b":1}');
  });

  it('normalises values written in words into the schema types', () => {
    expect(
      normaliseRecord(specs, { title: ' A paper ', published: 'February 25, 2009', price: '$1,234.50', pages: '12', open_access: 'yes', keywords: 'single', extra: 1 }),
    ).toEqual({ title: 'A paper', published: '2009-02-25', price: 1234.5, pages: 12, open_access: true, keywords: ['single'] });
    expect(normaliseRecord(specs, { title: 'N/A', price: null, keywords: [] })).toEqual({});
  });
});

describe('extraction through the fake OpenAI server', () => {
  const pages = [
    'A Study of Things\n\nPublished on 25 February 2009. Open access.\n\n' + 'Filler text about things. '.repeat(120),
    'Keywords: things, study\n\n' + 'More filler text. '.repeat(150),
    'The price of the printed copy is $19.99.\n\n' + 'Closing remarks. '.repeat(100),
  ];

  it('asks once per part with the strict schema and merges the answers into one valid record', async () => {
    fake.setDefault((body) => {
      const text = documentText(body);
      return {
        content: {
          title: text.includes('A Study of Things') ? 'A Study of Things' : null,
          // In words: the strict schema carries no formats; the answer is normalised here.
          published: text.includes('25 February 2009') ? '25 February 2009' : null,
          price: text.includes('$19.99') ? 19.99 : null,
          pages: null,
          open_access: text.includes('Open access') ? true : null,
          keywords: text.includes('Keywords') ? ['things', 'study'] : [],
        },
      };
    });
    const progress: [number, number][] = [];
    const records = await extractWithLlm(llm, PAPER, false, { pages, title: null }, { name: 'Papers', onProgress: (done, total) => void progress.push([done, total]) });
    expect(records).toEqual([{ title: 'A Study of Things', published: '2009-02-25', price: 19.99, open_access: true, keywords: ['things', 'study'] }]);
    const chats = fake.chatRequests;
    expect(chats.length).toBeGreaterThanOrEqual(3);
    expect(progress).toEqual(chats.map((_, i) => [i + 1, chats.length]));
    for (const chat of chats) {
      expect(chat.model).toBe('fake-model');
      expect(chat.temperature).toBe(0);
      expect(chat.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'extraction', strict: true } });
      const schema = chat.response_format!.json_schema!.schema;
      expect(schema).toMatchObject({ required: ['title', 'published', 'price', 'pages', 'open_access', 'keywords'], additionalProperties: false });
      expect(chat.messages[0].role).toBe('system');
      expect(chat.messages[1].content).toMatch(/^Extraction: Papers/);
    }
    // Every page went to the model.
    const sent = chats.map(documentText).join('\n');
    expect(sent).toContain('[Page 1]');
    expect(sent).toContain('[Page 3]');
    expect(sent).toContain('Closing remarks.');
  });

  it('asks again, naming the problem, when a value does not fit the schema', async () => {
    fake.enqueue({ content: { title: 'T', published: 'sometime in spring', price: null, pages: null, open_access: null, keywords: [] } });
    fake.enqueue({ content: { title: 'T', published: '2009-02-25', price: null, pages: null, open_access: null, keywords: [] } });
    const records = await extractWithLlm(llm, PAPER, false, { pages: ['A short paper.'] }, { name: 'Papers' });
    expect(records).toEqual([{ title: 'T', published: '2009-02-25' }]);
    const [, second] = fake.chatRequests;
    expect(second.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(second.messages[2].content).toContain('sometime in spring');
    expect(second.messages[3].content).toMatch(/"published" = "sometime in spring" does not fit its schema/);
  });

  it('recovers from an answer that is not JSON', async () => {
    fake.enqueue({ content: 'Sure! Here is the data: title is T' }, { content: 'still not json' });
    fake.enqueue({ content: { title: 'T', published: null, price: null, pages: null, open_access: null, keywords: null } });
    expect(await extractWithLlm(llm, PAPER, false, { pages: ['A short paper.'] }, { name: 'Papers' })).toEqual([{ title: 'T' }]);
  });

  it('refuses with a clear failure when the answers stay invalid', async () => {
    fake.setDefault({ content: { title: 'T', published: 'sometime', price: -5, pages: null, open_access: null, keywords: [] } });
    const error = await extractWithLlm(llm, PAPER, false, { pages: ['A short paper.'] }, { name: 'Papers', attempts: 3 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExtractionFailure);
    expect((error as ExtractionFailure).transient).toBe(false);
    expect((error as Error).message).toMatch(/^The language model gave no valid answer for the document after 3 attempts: "published" = "sometime" does not fit .*; "price" = -5 does not fit/);
    expect(fake.chatRequests).toHaveLength(3);
  });

  it('says whether a failing server may work later', async () => {
    fake.setDefault({ status: 503, message: 'overloaded' });
    const transient = await extractWithLlm(llm, PAPER, false, { pages: ['x'] }, { name: 'P' }).catch((e: unknown) => e);
    expect(transient).toMatchObject({ name: 'ExtractionFailure', transient: true });
    expect((transient as Error).message).toMatch(/could not be asked about the document: .*HTTP 503: overloaded/);
    fake.reset().setDefault({ status: 401, message: 'bad key' });
    const permanent = await extractWithLlm(llm, PAPER, false, { pages: ['x'] }, { name: 'P' }).catch((e: unknown) => e);
    expect(permanent).toMatchObject({ transient: false });
  });

  it('lists records part by part, removes the repeats of the overlaps, and keeps their order', async () => {
    const lines = Array.from({ length: 150 }, (_, i) => `Item ${String(i + 1).padStart(3, '0')}: Widget-${i + 1} costs $${(i + 1).toFixed(2)}`);
    let answered = 0;
    fake.setDefault((body) => {
      const records = [...documentText(body).matchAll(/Widget-(\d+) costs \$([\d.]+)/g)].map((m) => ({ name: `Widget-${m[1]}`, price: Number(m[2]) }));
      answered += records.length;
      return { content: { record_count: records.length, records } };
    });
    const records = await extractWithLlm(llm, ITEMS, true, { pages: [lines.slice(0, 70).join('\n\n'), lines.slice(70).join('\n\n')] }, { name: 'Items' });
    expect(fake.chatRequests.length).toBeGreaterThan(3);
    // The overlaps made the model see some records twice; they are listed once.
    expect(answered).toBeGreaterThan(150);
    expect(records).toEqual(lines.map((_, i) => ({ name: `Widget-${i + 1}`, price: i + 1 })));
    expect(fake.chatRequests[0].response_format!.json_schema!.schema).toMatchObject({
      required: ['record_count', 'records'],
      properties: { records: { type: 'array', items: { required: ['name', 'price'], additionalProperties: false } } },
    });
  });

  it('asks once more when the reported record count disagrees with the list', async () => {
    fake.enqueue({ content: { record_count: 3, records: [{ name: 'a', price: 1 }, { name: 'b', price: 2 }] } });
    fake.enqueue({ content: { record_count: 3, records: [{ name: 'a', price: 1 }, { name: 'b', price: 2 }, { name: 'c', price: 3 }] } });
    const records = await extractWithLlm(llm, ITEMS, true, { pages: ['a costs 1, b costs 2, c costs 3'] }, { name: 'Items' });
    expect(records.map((r) => r.name)).toEqual(['a', 'b', 'c']);
    expect(fake.chatRequests[1].messages.at(-1)!.content).toMatch(/record_count is 3 but "records" lists 2/);
    // After one correction the list is taken as it is.
    fake.reset();
    fake.setDefault({ content: { record_count: 5, records: [{ name: 'a', price: 1 }] } });
    expect(await extractWithLlm(llm, ITEMS, true, { pages: ['a costs 1'] }, { name: 'Items' })).toEqual([{ name: 'a', price: 1 }]);
    expect(fake.chatRequests).toHaveLength(2);
  });

  it('refuses documents over the part limit and stops when aborted', async () => {
    const big = Array.from({ length: 50 }, (_, i) => `Paragraph ${i}. ${'Text. '.repeat(300)}`);
    await expect(extractWithLlm(llm, PAPER, false, { pages: big }, { name: 'P', maxParts: 5 })).rejects.toThrow(/too long for extraction with the language model: \d+ parts/);
    const abort = new AbortController();
    fake.setDefault({ content: { title: 'T' }, delayMs: 2000 });
    const pending = extractWithLlm(llm, PAPER, false, { pages: ['x'] }, { name: 'P', signal: abort.signal });
    setTimeout(() => abort.abort(new Error('stopped')), 50);
    await expect(pending).rejects.toThrow('stopped');
  });
});
