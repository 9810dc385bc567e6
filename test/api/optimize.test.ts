// optimize_metadata and optimize_query / optimize_question on search and answer, both
// engines. Offline: filters derived from catalogue values named in the question, the text
// without what the filter covers, the caller's filter kept, proposals that match nothing
// dropped, and a catalogue that follows inserts, metadata updates and deletions. With a
// language model (the fake OpenAI server): the prompt carries the catalogue, valid proposals
// are used, unknown operators, filters matching nothing and unparsable ones are rejected,
// and a failing model gives way to the offline matcher.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hashEmbed } from '../../src/providers/embeddings/hashing.js';
import { KEYS, call, startTestApp, type TestApp } from '../helpers/app.js';
import { FakeOpenAI, type FakeChatBody } from '../helpers/fake-openai.js';
import { ENGINES } from '../helpers/stores.js';

const SEARCH = '/api/v1/documents/search/pages';
const ANSWER = '/api/v1/documents/answer';
const QUESTION = 'What did the 2023 finance report say about revenue?';

const DOCUMENTS = [
  { key: 'fin23', content: 'Revenue grew 12 percent in 2023, driven by subscriptions.', metadata: { department: 'finance', year: 2023, tags: ['quarterly', 'board'] } },
  { key: 'fin22', content: 'Revenue fell 3 percent in the year after the price cut.', metadata: { department: 'finance', year: 2022, tags: ['annual'] } },
  { key: 'legal23', content: 'The legal team reviewed forty contracts about revenue recognition.', metadata: { department: 'legal', year: 2023 } },
  { key: 'hr21', content: 'Hiring slowed; the report covers revenue per employee in the New York office.', metadata: { department: 'hr', year: 2021, region: 'New York' } },
] as const;

interface SearchData {
  results: { document_id: number }[];
  optimized_query: string;
  optimized_metadata: Record<string, unknown>;
}

async function setUpDocuments(t: TestApp): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  for (const d of DOCUMENTS) {
    const res = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', {
      body: { embedding: Array.from(hashEmbed(d.content)), content: d.content, metadata: d.metadata, external_id: d.key },
    });
    expect(res.statusCode, res.body).toBe(201);
    ids.set(d.key, res.json().data.document_id);
  }
  return ids;
}

async function search(t: TestApp, body: Record<string, unknown>): Promise<SearchData> {
  const res = await call(t.app, 'POST', SEARCH, { key: KEYS.read, body });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as SearchData;
}

describe.each(ENGINES)('query and metadata optimisation without a language model on %s', (engine) => {
  let t: TestApp;
  let ids: Map<string, number>;
  const docs = (data: SearchData) => new Set(data.results.map((r) => r.document_id));

  beforeAll(async () => {
    t = await startTestApp(engine);
    ids = await setUpDocuments(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('derives the filter from catalogue values in the query and removes them from it', async () => {
    const data = await search(t, { query: QUESTION, optimize_metadata: true, optimize_query: true });
    expect(data.optimized_metadata).toEqual({ department: 'finance', year: 2023 });
    expect(data.optimized_query).toBe('What did the report say about revenue?');
    expect(docs(data)).toEqual(new Set([ids.get('fin23')]));
    // Keyword search runs on the optimised query.
    const keyword = await search(t, { query: QUESTION, alpha: 0, optimize_metadata: true, optimize_query: true });
    expect(docs(keyword)).toEqual(new Set([ids.get('fin23')]));
  });

  it('optimises only what is asked', async () => {
    const metadataOnly = await search(t, { query: QUESTION, optimize_metadata: true });
    expect(metadataOnly.optimized_query).toBe(QUESTION);
    expect(metadataOnly.optimized_metadata).toEqual({ department: 'finance', year: 2023 });
    // optimize_query alone removes what the caller's own filter covers.
    const queryOnly = await search(t, { query: QUESTION, optimize_query: true, metadata_filter: { department: 'finance' } });
    expect(queryOnly.optimized_query).toBe('What did the 2023 report say about revenue?');
    expect(queryOnly.optimized_metadata).toEqual({ department: 'finance' });
    expect(docs(queryOnly)).toEqual(new Set([ids.get('fin23'), ids.get('fin22')]));
    const neither = await search(t, { query: QUESTION });
    expect(neither).toMatchObject({ optimized_query: QUESTION, optimized_metadata: {} });
  });

  it("keeps the caller's filter, combined with $and", async () => {
    const data = await search(t, { query: 'finance revenue growth', optimize_metadata: true, metadata_filter: { year: { $gte: 2023 } } });
    expect(data.optimized_metadata).toEqual({ $and: [{ year: { $gte: 2023 } }, { department: 'finance' }] });
    expect(docs(data)).toEqual(new Set([ids.get('fin23')]));
  });

  it('uses array elements and multi-word values of the catalogue', async () => {
    const tags = await search(t, { query: 'quarterly revenue numbers', optimize_metadata: true, optimize_query: true });
    expect(tags.optimized_metadata).toEqual({ tags: { $containsAny: ['quarterly'] } });
    expect(tags.optimized_query).toBe('revenue numbers');
    expect(docs(tags)).toEqual(new Set([ids.get('fin23')]));
    const region = await search(t, { query: 'staff costs in new york', optimize_metadata: true });
    expect(region.optimized_metadata).toEqual({ region: 'New York' });
  });

  it('keeps the original when the derived filter matches no document', async () => {
    const data = await search(t, { query: 'legal revenue in 2022', optimize_metadata: true, optimize_query: true });
    expect(data).toMatchObject({ optimized_metadata: {}, optimized_query: 'legal revenue in 2022' });
    expect(data.results.length).toBe(DOCUMENTS.length);
    // Matching nothing together with the caller's filter counts too.
    const withCaller = await search(t, { query: QUESTION, optimize_metadata: true, metadata_filter: { department: 'hr' } });
    expect(withCaller.optimized_metadata).toEqual({ department: 'hr' });
    expect(docs(withCaller)).toEqual(new Set([ids.get('hr21')]));
    const dates = await search(t, { query: QUESTION, optimize_metadata: true, created_at_filter: { $lt: '2001-01-01' } });
    expect(dates).toMatchObject({ optimized_metadata: {}, results: [] });
  });

  it('follows the catalogue as documents are added, updated and deleted', async () => {
    const query = 'marketing and sales revenue';
    expect((await search(t, { query, optimize_metadata: true })).optimized_metadata).toEqual({});
    const added = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', {
      body: { embedding: Array.from(hashEmbed('Campaign revenue')), content: 'Campaign revenue doubled.', metadata: { department: 'marketing' }, external_id: 'mkt' },
    });
    expect(added.statusCode).toBe(201);
    expect((await search(t, { query, optimize_metadata: true })).optimized_metadata).toEqual({ department: 'marketing' });

    const patched = await call(t.app, 'PATCH', '/api/v1/documents/external/mkt/metadata', { body: { metadata: { department: 'sales' } } });
    expect(patched.statusCode, patched.body).toBe(200);
    expect((await search(t, { query, optimize_metadata: true })).optimized_metadata).toEqual({ department: 'sales' });

    const deleted = await call(t.app, 'DELETE', '/api/v1/documents/external/mkt');
    expect(deleted.statusCode).toBe(200);
    expect((await search(t, { query, optimize_metadata: true })).optimized_metadata).toEqual({});
  });

  it('keeps workspaces apart', async () => {
    const other = await call(t.app, 'POST', SEARCH, { key: KEYS.other, body: { query: QUESTION, optimize_metadata: true, optimize_query: true } });
    expect(other.json().data).toMatchObject({ optimized_metadata: {}, optimized_query: QUESTION, results: [] });
  });

  it('answers 422 for optimisation without a query', async () => {
    const res = await call(t.app, 'POST', SEARCH, { key: KEYS.read, body: { embedding: Array.from(hashEmbed('x')), optimize_metadata: true } });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toContainEqual(expect.objectContaining({ loc: ['body', 'optimize_metadata'] }));
  });

  it('optimises the question of an answer and reports what was used', async () => {
    const res = await call(t.app, 'POST', ANSWER, { key: KEYS.read, body: { question: QUESTION, optimize_metadata: true, optimize_question: true } });
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data;
    expect(data.optimized_metadata).toEqual({ department: 'finance', year: 2023 });
    expect(data.optimized_question).toBe('What did the report say about revenue?');
    expect(data.sources.map((s: { document_id: number }) => s.document_id)).toEqual([ids.get('fin23')]);
    expect(data.answer).toBe('Revenue grew 12 percent in 2023, driven by subscriptions. [1]');

    // Without optimisation "finance" is a word no page holds (only metadata does): nothing answers.
    const plain = (await call(t.app, 'POST', ANSWER, { key: KEYS.read, body: { question: QUESTION } })).json().data;
    expect(plain).toMatchObject({ optimized_question: QUESTION, optimized_metadata: {}, sources: [] });
  });
});

// ---------------------------------------------------------------------------------------------
// With a language model

function proposal(filter: unknown, question: string) {
  return { content: { metadata_filter: typeof filter === 'string' ? filter : JSON.stringify(filter), question } };
}

describe.each(ENGINES)('query and metadata optimisation with a language model on %s', (engine) => {
  let t: TestApp;
  let fake: FakeOpenAI;
  let ids: Map<string, number>;
  const docs = (data: SearchData) => new Set(data.results.map((r) => r.document_id));

  beforeAll(async () => {
    fake = await FakeOpenAI.start();
    t = await startTestApp(engine, { env: { OPENAI_BASE_URL: fake.baseUrl, FOLIO_LLM_MODEL: 'fake-chat' } });
    ids = await setUpDocuments(t);
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });
  beforeEach(() => {
    fake.reset();
  });

  it('sends the catalogue, the caller filter and the question, and uses a valid proposal', async () => {
    fake.enqueue(proposal({ department: 'finance', year: { $gte: 2023 } }, 'What did the report say about revenue?'));
    const data = await search(t, { query: QUESTION, optimize_metadata: true, optimize_query: true, metadata_filter: { tags: { $size: 2 } } });
    expect(fake.chatRequests).toHaveLength(1);
    const request: FakeChatBody = fake.chatRequests[0];
    expect(request.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'query_optimisation', strict: true } });
    const user = request.messages[1].content;
    expect(user).toContain(`Question: ${QUESTION}`);
    expect(user).toContain('Filter the caller already applies (kept in any case): {"tags":{"$size":2}}');
    const catalogue = JSON.parse(/Metadata catalogue \(fields, types, frequent values\): (.*)/.exec(user)![1]);
    expect(catalogue).toContainEqual(expect.objectContaining({ field: 'department', types: ['string'], values: expect.arrayContaining(['finance', 'legal', 'hr']) }));
    expect(catalogue).toContainEqual(expect.objectContaining({ field: 'year', types: ['number'], values: expect.arrayContaining([2021, 2022, 2023]) }));
    expect(catalogue).toContainEqual(expect.objectContaining({ field: 'tags', array: true }));

    expect(data.optimized_metadata).toEqual({ $and: [{ tags: { $size: 2 } }, { department: 'finance', year: { $gte: 2023 } }] });
    expect(data.optimized_query).toBe('What did the report say about revenue?');
    expect(docs(data)).toEqual(new Set([ids.get('fin23')]));
  });

  it.each([
    ['an unknown operator', { department: { $like: 'fin%' } }],
    ['a filter matching no document', { department: 'finance', year: 1999 }],
    ['text that is not JSON', 'department = finance'],
    ['a JSON array', '[{"department": "finance"}]'],
    ['an operator on the wrong kind of value', { year: { $gt: [2020] } }],
  ])('keeps the original when the model proposes %s', async (_name, filter) => {
    fake.enqueue(proposal(filter, 'What did the report say about revenue?'));
    const data = await search(t, { query: QUESTION, optimize_metadata: true, optimize_query: true });
    expect(fake.chatRequests).toHaveLength(1);
    expect(data.optimized_metadata).toEqual({});
    // The rewrite assumed the rejected filter: the question stays as it was.
    expect(data.optimized_query).toBe(QUESTION);
    expect(data.results.length).toBe(DOCUMENTS.length);
  });

  it('ignores a proposed filter when only the query is to be optimised', async () => {
    fake.enqueue(proposal({ department: 'legal' }, 'What did the 2023 report say about revenue?'));
    const data = await search(t, { query: QUESTION, optimize_query: true, metadata_filter: { department: 'finance' } });
    expect(fake.chatRequests[0].messages[1].content).toMatch(/Do not propose a filter/);
    expect(data).toMatchObject({ optimized_metadata: { department: 'finance' }, optimized_query: 'What did the 2023 report say about revenue?' });
  });

  it('falls back to the offline matcher when the model fails', async () => {
    fake.setDefault({ status: 503, message: 'overloaded', headers: { 'retry-after-ms': '1' } });
    const data = await search(t, { query: QUESTION, optimize_metadata: true, optimize_query: true });
    expect(fake.chatRequests).toHaveLength(3);
    expect(data).toMatchObject({ optimized_metadata: { department: 'finance', year: 2023 }, optimized_query: 'What did the report say about revenue?' });

    fake.reset();
    fake.enqueue({ content: 'department: finance' }, { content: { filter: 'x' } });
    const malformed = await search(t, { query: QUESTION, optimize_metadata: true });
    expect(malformed.optimized_metadata).toEqual({ department: 'finance', year: 2023 });
  });

  it('optimises the question of an answer with the model, then answers from the filtered pages', async () => {
    fake.enqueue(proposal({ department: 'finance', year: 2023 }, 'What did the report say about revenue?'), (body) => {
      const user = body.messages[1].content;
      expect(user).toContain(`Question: ${QUESTION}`);
      expect(user).toMatch(/^\[1\] \(document \d+, page 1\)\nRevenue grew 12 percent/m);
      return { content: { answerable: true, answer: 'Revenue grew 12 percent [1].', citations: [{ passage: 1, quote: 'Revenue grew 12 percent in 2023' }] } };
    });
    const res = await call(t.app, 'POST', ANSWER, { key: KEYS.read, body: { question: QUESTION, optimize_metadata: true, optimize_question: true } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['x-folio-answer-mode']).toBe('llm');
    expect(fake.chatRequests).toHaveLength(2);
    expect(res.json().data).toMatchObject({
      answer: 'Revenue grew 12 percent [1].',
      optimized_question: 'What did the report say about revenue?',
      optimized_metadata: { department: 'finance', year: 2023 },
      sources: [{ document_id: ids.get('fin23'), page_number: 1 }],
    });
  });
});
