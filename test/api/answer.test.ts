// POST /api/v1/documents/answer on both engines. Offline: corpus files through the real
// ingest pipeline, extractive answers whose citations point at pages (and sentences) that
// hold the answer, formats, "nothing relevant", filters, top_k, validation and auth. With a
// language model (the local fake OpenAI server): the prompt carries the retrieved passages,
// verified citations are renumbered to sources, and malformed, uncited or fabricated output,
// failures and 429s end in the documented behaviour.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NOT_FOUND_ANSWER } from '../../src/answer/extractive.js';
import { hashEmbed } from '../../src/providers/embeddings/hashing.js';
import { KEYS, call, startTestApp, type TestApp } from '../helpers/app.js';
import { FakeOpenAI, type FakeChatBody, type FakeReply } from '../helpers/fake-openai.js';
import { multipartBody } from '../helpers/multipart.js';
import { ENGINES } from '../helpers/stores.js';
import { waitForTask } from '../helpers/tasks.js';
import { CORPUS_DOCS as DOCS } from '../helpers/corpus.js';

const ANSWER = '/api/v1/documents/answer';
const FILES = ['pdf/text/bitcoin.pdf', 'txt/alice-in-wonderland.txt', 'markdown/the-art-of-command-line.en.md', 'pdf/text/google-doc-document.pdf'];

interface Source {
  document_id: number;
  page_number: number;
  relevance: string;
  document_metadata: Record<string, unknown>;
  sentence_ids: number[];
}

interface AnswerData {
  answer: string;
  format: string;
  sources: Source[];
  optimized_question: string;
  optimized_metadata: Record<string, unknown>;
}

const squash = (text: string) => text.replace(/\s+/g, ' ').trim();

async function ask(t: TestApp, body: unknown, key: string = KEYS.read): Promise<{ data: AnswerData; mode: string }> {
  const res = await call(t.app, 'POST', ANSWER, { key, body });
  expect(res.statusCode, res.body).toBe(200);
  const json = res.json();
  expect(json).toMatchObject({ success: true, error: null, meta: { version: '1.0.0' } });
  return { data: json.data as AnswerData, mode: String(res.headers['x-folio-answer-mode']) };
}

/** The page a source names, and the sentences with the given ids (with the page each belongs to). */
async function pageOf(t: TestApp, source: Source): Promise<string> {
  const doc = await call(t.app, 'GET', `/api/v1/documents/internal/${source.document_id}`, { key: KEYS.read });
  const page = (doc.json().data.pages as { page_number: number; content: string }[]).find((p) => p.page_number === source.page_number);
  expect(page, `document ${source.document_id} has page ${source.page_number}`).toBeDefined();
  return page!.content;
}

/** The source's sentences, read through the API from the pages of its document, each with its page; all must be there. */
async function sentencesOf(t: TestApp, source: Source) {
  const ids = source.sentence_ids;
  const doc = await call(t.app, 'GET', `/api/v1/documents/internal/${source.document_id}`, { key: KEYS.read });
  const found: { id: number; content: string; document_id: number; page_number: number }[] = [];
  for (const page of doc.json().data.pages as { id: number; page_number: number }[]) {
    const view = await call(t.app, 'GET', `/api/v1/documents/content/pages/${page.id}?include_paragraphs=true`, { key: KEYS.read });
    for (const paragraph of view.json().paragraphs as { sentences: { id: number; content: string }[] }[]) {
      for (const s of paragraph.sentences) {
        if (ids.includes(s.id)) found.push({ id: s.id, content: s.content, document_id: source.document_id, page_number: page.page_number });
      }
    }
  }
  expect(found.map((s) => s.id).sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
  return found;
}

/** Checks that source n (marker [n]) is a page holding `evidence`, and that its sentence ids hold it. */
async function expectCitedEvidence(t: TestApp, data: AnswerData, marker: number, evidence: string): Promise<void> {
  expect(data.answer).toContain(`[${marker}]`);
  const source = data.sources[marker - 1];
  expect(squash(await pageOf(t, source))).toContain(evidence);
  expect(source.sentence_ids.length).toBeGreaterThan(0);
  const sentences = await sentencesOf(t, source);
  for (const s of sentences) expect([Number(s.document_id), s.page_number]).toEqual([source.document_id, source.page_number]);
  expect(sentences.some((s) => squash(s.content).includes(evidence))).toBe(true);
}

describe.each(ENGINES)('answers without a language model on %s', (engine) => {
  let t: TestApp;
  const documents = new Map<string, number>();

  beforeAll(async () => {
    t = await startTestApp(engine);
    const tasks = new Map<string, string>();
    for (const file of FILES) {
      const body = multipartBody(
        { metadata: JSON.stringify({ corpus: file, kind: file.split('/')[0] }) },
        { filename: path.basename(file), data: fs.readFileSync(path.join(DOCS, file)) },
      );
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/documents/ingest', headers: { ...body.headers, 'x-api-key': KEYS.write }, payload: body.payload });
      expect(res.statusCode, res.body).toBe(201);
      tasks.set(file, res.json().data.task_identifier);
    }
    for (const [file, task] of tasks) {
      expect((await waitForTask(t.app, task, 120_000)).status).toBe('COMPLETED');
      documents.set(file, (await call(t.app, 'GET', `/api/v1/documents/task/${task}`)).json().data.id);
    }
  }, 180_000);
  afterAll(async () => {
    await t?.close();
  });

  it.each([
    ['What is required to prevent double-spending?', 'pdf/text/bitcoin.pdf', 'a trusted third party is still required to prevent double-spending'],
    ['How is the proof-of-work difficulty adjusted over time?', 'pdf/text/bitcoin.pdf', 'the proof-of-work difficulty is determined by a moving average'],
    ['What was written on the small cake Alice found in the glass box?', 'txt/alice-in-wonderland.txt', "the words 'EAT ME' were beautifully marked in currants"],
    ['Who was having tea at the table set out under a tree?', 'txt/alice-in-wonderland.txt', 'the March Hare and the Hatter were having tea'],
    ['Should errors ever pass silently?', 'pdf/text/google-doc-document.pdf', 'Errors should never pass silently.'],
  ])('answers %j citing the page that holds the answer sentence', async (question, file, evidence) => {
    const { data, mode } = await ask(t, { question });
    expect(mode).toBe('extractive');
    expect(squash(data.answer)).toContain(evidence);
    expect(data.sources[0].document_id).toBe(documents.get(file));
    await expectCitedEvidence(t, data, 1, evidence);
    // Every marker in the answer is a source that drew on sentences.
    for (const m of data.answer.matchAll(/\[(\d+)\]/g)) {
      expect(data.sources[Number(m[1]) - 1].sentence_ids.length).toBeGreaterThan(0);
    }
  });

  it('answers in the documented shape', async () => {
    const { data } = await ask(t, { question: 'What is required to prevent double-spending?' });
    expect(Object.keys(data).sort()).toEqual(['answer', 'format', 'optimized_metadata', 'optimized_question', 'sources']);
    expect(data.format).toBe('MARKDOWN');
    expect(data.optimized_question).toBe('What is required to prevent double-spending?');
    expect(data.optimized_metadata).toEqual({});
    expect(data.sources).toHaveLength(5);
    for (const s of data.sources) {
      expect(Object.keys(s).sort()).toEqual(['document_id', 'document_metadata', 'page_number', 'relevance', 'sentence_ids']);
      expect(s.relevance).toMatch(/^[01]\.\d{4}$/);
      const file = [...documents].find(([, id]) => id === s.document_id)![0];
      // The caller's metadata, plus the title the parser found when the caller set none.
      const { title, ...given } = s.document_metadata;
      expect(given).toEqual({ corpus: file, kind: file.split('/')[0] });
      if (title !== undefined) expect(typeof title).toBe('string');
    }
    // Cited sources first, then the other retrieved pages by relevance.
    const cited = data.sources.filter((s) => s.sentence_ids.length > 0).length;
    expect(data.sources.slice(0, cited).every((s) => s.sentence_ids.length > 0)).toBe(true);
    const rest = data.sources.slice(cited).map((s) => Number(s.relevance));
    expect(rest).toEqual([...rest].sort((a, b) => b - a));
  });

  it('honours MARKDOWN and PLAIN_TEXT', async () => {
    const question = 'How do I search through the command history in Bash?';
    const markdown = await ask(t, { question, format: 'MARKDOWN' });
    expect(markdown.data.format).toBe('MARKDOWN');
    expect(markdown.data.answer).toContain('**ctrl-r**');
    const plain = await ask(t, { question, format: 'PLAIN_TEXT' });
    expect(plain.data.format).toBe('PLAIN_TEXT');
    expect(plain.data.answer).toContain('ctrl-r to search through command history');
    expect(plain.data.answer).not.toMatch(/\*\*|`|^- /m);
    expect(plain.data.sources).toEqual(markdown.data.sources);
  });

  it('says so plainly when nothing relevant is found', async () => {
    for (const question of ['How many moons does Neptune have?', 'What is the boiling point of liquid nitrogen in kelvin?']) {
      const { data, mode } = await ask(t, { question });
      expect(data.answer).toBe(NOT_FOUND_ANSWER);
      expect(data.sources).toEqual([]);
      expect(mode).toBe('none');
    }
    // A workspace without documents.
    const other = await ask(t, { question: 'What is required to prevent double-spending?' }, KEYS.other);
    expect(other.data).toMatchObject({ answer: NOT_FOUND_ANSWER, sources: [] });
  });

  it('answers only from documents matching the filters', async () => {
    const question = 'What is required to prevent double-spending?';
    const alice = await ask(t, { question, metadata_filter: { kind: 'txt' } });
    for (const s of alice.data.sources) expect(s.document_id).toBe(documents.get('txt/alice-in-wonderland.txt'));
    expect(alice.data.optimized_metadata).toEqual({ kind: 'txt' });

    const bitcoin = await ask(t, { question, metadata_filter: { corpus: { $in: ['pdf/text/bitcoin.pdf'] } }, top_k: 3 });
    expect(bitcoin.data.sources).toHaveLength(3);
    for (const s of bitcoin.data.sources) expect(s.document_id).toBe(documents.get('pdf/text/bitcoin.pdf'));

    const future = await ask(t, { question, created_at_filter: { $gt: '2999-01-01T00:00:00' } });
    expect(future.data).toMatchObject({ answer: NOT_FOUND_ANSWER, sources: [] });
    const past = await ask(t, { question, updated_at_filter: { $gt: '2000-01-01' } });
    expect(past.data.sources.length).toBeGreaterThan(0);
  });

  it('bounds the sources by top_k', async () => {
    const { data } = await ask(t, { question: 'Alice and the White Rabbit', top_k: 2 });
    expect(data.sources.length).toBeLessThanOrEqual(2);
    expect(data.sources.length).toBeGreaterThan(0);
    const many = await ask(t, { question: 'Alice and the White Rabbit', top_k: 20 });
    expect(many.data.sources).toHaveLength(20);
  });

  it('answers 400 for an unusable filter', async () => {
    const res = await call(t.app, 'POST', ANSWER, { key: KEYS.read, body: { question: 'x', metadata_filter: { kind: { $foo: 1 } } } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ error_code: 'INVALID_FILTER' });
    const date = await call(t.app, 'POST', ANSWER, { key: KEYS.read, body: { question: 'x', created_at_filter: { $gt: 'yesterday' } } });
    expect(date.statusCode).toBe(400);
  });

  const invalid: [string, unknown, string[], string][] = [
    ['a missing question', { format: 'MARKDOWN' }, ['body', 'question'], 'missing'],
    ['an empty question', { question: '' }, ['body', 'question'], 'string_too_short'],
    ['a blank question', { question: '   \n ' }, ['body', 'question'], 'string_pattern_mismatch'],
    ['a question that is not a string', { question: 42 }, ['body', 'question'], 'string_type'],
    ['an unknown format', { question: 'q', format: 'HTML' }, ['body', 'format'], 'enum'],
    ['a lower-case format', { question: 'q', format: 'markdown' }, ['body', 'format'], 'enum'],
    ['top_k 0', { question: 'q', top_k: 0 }, ['body', 'top_k'], 'greater_than_equal'],
    ['top_k above 50', { question: 'q', top_k: 51 }, ['body', 'top_k'], 'less_than_equal'],
    ['a fractional top_k', { question: 'q', top_k: 2.5 }, ['body', 'top_k'], 'int_type'],
    ['a string flag', { question: 'q', optimize_metadata: 'yes' }, ['body', 'optimize_metadata'], 'bool_type'],
    ['a numeric flag', { question: 'q', optimize_question: 1 }, ['body', 'optimize_question'], 'bool_type'],
    ['a filter that is an array', { question: 'q', metadata_filter: [] }, ['body', 'metadata_filter'], 'dict_type'],
    ['a date filter that is a string', { question: 'q', created_at_filter: '2020' }, ['body', 'created_at_filter'], 'dict_type'],
  ];
  it.each(invalid)('answers 422 for %s', async (_name, body, loc, type) => {
    const res = await call(t.app, 'POST', ANSWER, { key: KEYS.read, body });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().detail).toContainEqual(expect.objectContaining({ loc, type }));
  });

  it('answers 422 for malformed JSON and an empty body, 401 without a key', async () => {
    const bad = await call(t.app, 'POST', ANSWER, { key: KEYS.read, rawBody: '{"question":' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0]).toMatchObject({ loc: ['body'], type: 'json_invalid' });
    const empty = await call(t.app, 'POST', ANSWER, { key: KEYS.read, rawBody: '' });
    expect(empty.statusCode).toBe(422);
    const anonymous = await call(t.app, 'POST', ANSWER, { key: null, body: { question: 'q' } });
    expect(anonymous.statusCode).toBe(401);
  });
});

// ---------------------------------------------------------------------------------------------
// With a language model

const PASSAGES = [
  { content: 'Bitcoin is a peer-to-peer electronic cash system. A trusted third party is not required to prevent double-spending; the network timestamps transactions.', metadata: { topic: 'bitcoin' } },
  { content: 'The four golden signals of monitoring are latency, traffic, errors, and saturation. Focus on these four metrics.', metadata: { topic: 'sre' } },
  { content: 'Alice was beginning to get very tired of sitting by her sister on the bank. The White Rabbit ran by.', metadata: { topic: 'alice' } },
  { content: 'Use ctrl-r to search through command history in Bash. Learn man bash early.', metadata: { topic: 'shell' } },
];

/** The numbered passages of a grounded-answer prompt: number -> text. */
function promptPassages(body: FakeChatBody): Map<number, string> {
  const user = body.messages.find((m) => m.role === 'user')!.content;
  const out = new Map<number, string>();
  for (const m of user.matchAll(/^\[(\d+)\] \(document \d+, page \d+\)\n([^\n]*)/gm)) out.set(Number(m[1]), m[2]);
  return out;
}

/** A model that answers from the passage holding `phrase`, citing it with that phrase as the quote. */
function citing(phrase: string, answer = 'The passages say so'): (body: FakeChatBody) => FakeReply {
  return (body) => {
    const hit = [...promptPassages(body)].find(([, text]) => text.includes(phrase));
    if (!hit) return { content: { answerable: false, answer: 'Not in the passages.', citations: [] } };
    return { content: { answerable: true, answer: `${answer} [${hit[0]}].`, citations: [{ passage: hit[0], quote: phrase }] } };
  };
}

describe.each(ENGINES)('answers with a language model on %s', (engine) => {
  let t: TestApp;
  let fake: FakeOpenAI;
  const ids: number[] = [];

  beforeAll(async () => {
    fake = await FakeOpenAI.start();
    t = await startTestApp(engine, { env: { OPENAI_BASE_URL: fake.baseUrl, FOLIO_LLM_MODEL: 'fake-chat', FOLIO_LLM_TIMEOUT_MS: '2000' } });
    expect(t.runtime.llm?.model).toBe('fake-chat');
    for (const p of PASSAGES) {
      const res = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', {
        body: { embedding: Array.from(hashEmbed(p.content)), content: p.content, metadata: p.metadata },
      });
      expect(res.statusCode, res.body).toBe(201);
      ids.push(res.json().data.document_id);
    }
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });
  beforeEach(() => {
    fake.reset();
  });

  it('puts the retrieved passages in a grounded prompt and returns the verified, renumbered answer', async () => {
    fake.enqueue(citing('latency, traffic, errors, and saturation', 'Latency, traffic, errors and saturation'));
    const { data, mode } = await ask(t, { question: 'What are the four golden signals of monitoring?', top_k: 3 });
    expect(mode).toBe('llm');
    expect(fake.chatRequests).toHaveLength(1);
    const request = fake.chatRequests[0];
    expect(request.model).toBe('fake-chat');
    expect(request.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'grounded_answer', strict: true } });
    expect(request.messages[0]).toMatchObject({ role: 'system' });
    expect(request.messages[0].content).toMatch(/only the numbered passages/);
    const user = request.messages[1].content;
    expect(user).toMatch(/Question: What are the four golden signals of monitoring\?$/);
    // Every page of the workspace was retrieved (fewer than the pool), each one a passage.
    const passages = promptPassages(request);
    expect(passages.size).toBe(PASSAGES.length);
    for (const p of PASSAGES) expect([...passages.values()]).toContain(p.content);

    // The model cited its passage n; the answer's [1] is sources[0], that page.
    expect(data.answer).toBe('Latency, traffic, errors and saturation [1].');
    expect(data.sources).toHaveLength(3);
    expect(data.sources[0].document_id).toBe(ids[1]);
    expect(data.sources[0].document_metadata).toEqual({ topic: 'sre' });
    const sentences = await sentencesOf(t, data.sources[0]);
    expect(sentences.map((s) => s.content)).toEqual(['The four golden signals of monitoring are latency, traffic, errors, and saturation.']);
    for (const s of data.sources.slice(1)) expect(s.sentence_ids).toEqual([]);
  });

  it('asks for plain text and strips Markdown when format is PLAIN_TEXT', async () => {
    fake.enqueue((body) => {
      const n = [...promptPassages(body)].find(([, text]) => text.includes('ctrl-r'))![0];
      return { content: { answerable: true, answer: `Press **ctrl-r** in \`bash\` [${n}].`, citations: [{ passage: n, quote: 'Use ctrl-r to search through command history' }] } };
    });
    const { data, mode } = await ask(t, { question: 'How do I search the command history?', format: 'PLAIN_TEXT' });
    expect(mode).toBe('llm');
    expect(fake.chatRequests[0].messages[0].content).toMatch(/plain text, without any Markdown/);
    expect(data).toMatchObject({ format: 'PLAIN_TEXT', answer: 'Press ctrl-r in bash [1].' });
    expect(data.sources[0].document_id).toBe(ids[3]);
  });

  it('refuses an uncited answer and returns the extractive answer instead', async () => {
    fake.enqueue({ content: { answerable: true, answer: 'Bitcoin needs no trusted third party.', citations: [] } });
    const { data, mode } = await ask(t, { question: 'What is required to prevent double-spending?' });
    expect(mode).toBe('fallback');
    expect(data.answer).not.toContain('Bitcoin needs no trusted third party');
    expect(data.answer).toContain('A trusted third party is not required to prevent double-spending; the network timestamps transactions. [1]');
    expect(data.sources[0].document_id).toBe(ids[0]);
    expect(data.sources[0].sentence_ids.length).toBe(1);
  });

  it('refuses citations whose quote is not in the cited passage', async () => {
    fake.enqueue((body) => ({
      content: { answerable: true, answer: 'Satoshi mined the genesis block in 2009 [1].', citations: [{ passage: 1, quote: 'the genesis block was mined by Satoshi in January 2009' }] },
      model: body.model,
    }));
    const { data, mode } = await ask(t, { question: 'What is required to prevent double-spending?' });
    expect(mode).toBe('fallback');
    expect(data.answer).not.toMatch(/Satoshi/);
    expect(data.sources[0].document_id).toBe(ids[0]);
  });

  it('falls back when the model keeps answering malformed output', async () => {
    fake.enqueue({ content: 'A trusted third party, I think.' }, { content: { answer: 'missing fields' } });
    const { data, mode } = await ask(t, { question: 'What is required to prevent double-spending?' });
    expect(mode).toBe('fallback');
    expect(fake.chatRequests).toHaveLength(2);
    expect(data.answer).toContain('[1]');
  });

  it('retries 429 and 5xx before answering', async () => {
    fake.enqueue(
      { status: 429, message: 'Rate limit reached', headers: { 'retry-after-ms': '20' } },
      { status: 502, message: 'bad gateway', headers: { 'retry-after-ms': '1' } },
      citing('Alice was beginning to get very tired'),
    );
    const { data, mode } = await ask(t, { question: 'Who was tired of sitting by her sister?' });
    expect(mode).toBe('llm');
    expect(fake.chatRequests).toHaveLength(3);
    expect(data.sources[0].document_id).toBe(ids[2]);
  });

  it('retries a timed-out call, and falls back when the model stays unavailable', async () => {
    fake.enqueue({ content: { answerable: false, answer: '', citations: [] }, delayMs: 3000 }, citing('White Rabbit ran by'));
    const slow = await ask(t, { question: 'Who ran by Alice?' });
    expect(slow.mode).toBe('llm');
    expect(fake.chatRequests).toHaveLength(2);

    fake.reset();
    fake.setDefault({ status: 500, message: 'down', headers: { 'retry-after-ms': '1' } });
    const down = await ask(t, { question: 'Who ran by Alice?' });
    expect(down.mode).toBe('fallback');
    expect(fake.chatRequests).toHaveLength(3);
    expect(down.data.answer).toContain('The White Rabbit ran by. [1]');
  });

  it('says so plainly when the model finds no answer in the passages', async () => {
    fake.enqueue({ content: { answerable: false, answer: 'The passages do not mention Neptune.', citations: [] } });
    const { data, mode } = await ask(t, { question: 'How many moons does Neptune have?' });
    expect(mode).toBe('llm');
    expect(data).toMatchObject({ answer: NOT_FOUND_ANSWER, sources: [] });
  });

  it('does not call the model when no page matches the filters', async () => {
    const { data, mode } = await ask(t, { question: 'What is required to prevent double-spending?', metadata_filter: { topic: 'none' } });
    expect(mode).toBe('none');
    expect(data).toMatchObject({ answer: NOT_FOUND_ANSWER, sources: [] });
    expect(fake.chatRequests).toHaveLength(0);
  });
});
