// Answer building blocks without a database: sentence scoring and picking, the extractive
// answer's formats, and the grounded answer's passage packing, prompt, citation checks and
// refusals (the model is a scripted LlmProvider).
import { describe, expect, it } from 'vitest';
import {
  NOT_FOUND_ANSWER,
  composeExtractive,
  neutraliseReferences,
  pickSentences,
  scoreSentences,
  type CandidatePage,
} from '../../src/answer/extractive.js';
import {
  UncitedAnswerError,
  answerMessages,
  buildPassages,
  groundedAnswer,
  markerNumbers,
  quoteSupported,
  rewriteMarkers,
} from '../../src/answer/grounded.js';
import { splitSentences } from '../../src/text/segmentation.js';
import type { ChatRequest, LlmProvider } from '../../src/providers/llm/types.js';

let nextId = 1;
function page(id: number, content: string, relevance = 0.5, pageNumber = id): CandidatePage {
  return {
    id,
    documentId: 100 + id,
    pageNumber,
    relevance,
    content,
    sentences: splitSentences(content).map((s, i) => ({ id: nextId++, pageId: id, paragraphIndex: 0, sentenceIndex: i, content: s })),
  };
}

const bitcoin = page(
  1,
  'A purely peer-to-peer version of electronic cash would allow online payments to be sent directly. ' +
    'Digital signatures provide part of the solution, but the main benefits are lost if a trusted third party is still required to prevent double-spending. ' +
    'We propose a solution to the double-spending problem using a peer-to-peer network.',
  0.6,
);
const alice = page(
  2,
  'Alice was beginning to get very tired of sitting by her sister on the bank. ' +
    'Once or twice she had peeped into the book her sister was reading. It had no pictures or conversations in it.',
  0.4,
);
const markdown = page(3, 'Use **ctrl-r** to search through the `bash` command history. Learn `man bash` early.', 0.3);

function fakeLlm(reply: (request: ChatRequest) => unknown, budget = 8000): LlmProvider & { requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  return {
    model: 'scripted',
    promptTokenBudget: budget,
    requests,
    async chat(request) {
      requests.push(request);
      const json = reply(request);
      return { content: JSON.stringify(json), json, model: 'scripted' };
    },
  };
}

describe('extractive answers', () => {
  it('scores the sentence that answers highest', () => {
    const scored = scoreSentences('What is required to prevent double-spending?', [bitcoin, alice]);
    expect(scored[0].sentence.content).toMatch(/^Digital signatures provide part of the solution/);
    expect(scored[0].coverage).toBeGreaterThan(0.5);
    expect(scored.every((s) => s.page.id === bitcoin.id)).toBe(true);
  });

  it('finds nothing relevant when the question shares too little with the pages', () => {
    expect(pickSentences(scoreSentences('What is the boiling point of liquid nitrogen?', [bitcoin, alice]), 5)).toEqual([]);
    expect(pickSentences(scoreSentences('the of and', [bitcoin]), 5)).toEqual([]);
  });

  it('weighs a missing question term lightly when the workspace knows it, heavily when not', () => {
    const revenue = page(7, 'Revenue grew 12 percent in 2023, driven by subscriptions.');
    const question = 'What did the report say about revenue?';
    expect(pickSentences(scoreSentences(question, [revenue]), 5)).toEqual([]);
    const picked = pickSentences(scoreSentences(question, [revenue], (term) => term === 'report'), 5);
    expect(picked.map((p) => p.sentence.content)).toEqual(['Revenue grew 12 percent in 2023, driven by subscriptions.']);
  });

  it('picks a few distinct sentences from at most top_k pages', () => {
    const picked = pickSentences(scoreSentences('Who was sitting by her sister reading a book?', [bitcoin, alice]), 1);
    expect(picked.length).toBeGreaterThanOrEqual(1);
    expect(picked.length).toBeLessThanOrEqual(3);
    expect(new Set(picked.map((p) => p.page.id))).toEqual(new Set([alice.id]));
  });

  it('writes MARKDOWN as a paragraph or a list, PLAIN_TEXT without Markdown', () => {
    expect(composeExtractive([{ text: 'One **bold** claim.', marker: 1 }], 'MARKDOWN')).toBe('One **bold** claim. [1]');
    expect(composeExtractive([{ text: 'First.', marker: 1 }, { text: 'Second.', marker: 2 }], 'MARKDOWN')).toBe('- First. [1]\n- Second. [2]');
    expect(composeExtractive([{ text: 'Use **ctrl-r**  in `bash`.', marker: 1 }, { text: 'Second.', marker: 1 }], 'PLAIN_TEXT')).toBe(
      'Use ctrl-r in bash. [1] Second. [1]',
    );
    expect(composeExtractive([], 'MARKDOWN')).toBe(NOT_FOUND_ANSWER);
    const long = composeExtractive([{ text: 'word '.repeat(300), marker: 1 }], 'PLAIN_TEXT');
    expect(long.length).toBeLessThan(520);
    expect(long).toMatch(/… \[1\]$/);
  });

  it("puts the documents' own bracketed references in parentheses", () => {
    expect(neutraliseReferences('as in Hashcash [6] and [2-5], see [7][2]; keep [a]')).toBe('as in Hashcash (6) and (2-5), see (7)(2); keep [a]');
  });
});

describe('grounded answers', () => {
  const pages = [bitcoin, alice, markdown];
  const scored = scoreSentences('What is required to prevent double-spending?', pages);
  const passages = buildPassages(pages, scored, 4000);

  it('numbers the retrieved pages as passages and puts them in the prompt', () => {
    expect(passages.map((p) => p.number)).toEqual([1, 2, 3]);
    const [system, user] = answerMessages('What is required?', passages, 'PLAIN_TEXT');
    expect(system.content).toMatch(/only the numbered passages/);
    expect(system.content).toMatch(/plain text, without any Markdown/);
    expect(user.content).toContain(`[1] (document ${bitcoin.documentId}, page ${bitcoin.pageNumber})\n${bitcoin.content}`);
    expect(user.content).toContain(`[2] (document ${alice.documentId}`);
    expect(user.content).toMatch(/Question: What is required\?$/);
  });

  it('packs passages under the token budget, condensing long pages to their best sentences', () => {
    const filler = Array.from({ length: 200 }, (_, i) => `Unrelated sentence number ${i} about nothing in particular.`).join(' ');
    const long = page(9, `${filler} The trusted third party is required to prevent double-spending. ${filler}`, 0.9);
    const packed = buildPassages([long, bitcoin], scoreSentences('trusted third party double-spending', [long, bitcoin]), 600);
    expect(packed.length).toBeGreaterThanOrEqual(1);
    expect(packed[0].text).toContain('The trusted third party is required to prevent double-spending.');
    expect(packed[0].text.length).toBeLessThan(long.content.length / 4);
    const total = packed.reduce((n, p) => n + p.text.length / 4, 0);
    expect(total).toBeLessThanOrEqual(600);
  });

  it('keeps citations whose quotes are in the cited passage', async () => {
    const llm = fakeLlm(() => ({
      answerable: true,
      answer: 'A trusted third party is otherwise needed [1]; the paper proposes a peer-to-peer network [1].',
      citations: [{ passage: 1, quote: 'the main benefits are lost if a trusted third party is still required' }],
    }));
    const result = await groundedAnswer(llm, 'What is required?', passages, 'MARKDOWN');
    expect(result).toMatchObject({ answerable: true, cited: [1] });
    expect(result.answer).toBe('A trusted third party is otherwise needed [1]; the paper proposes a peer-to-peer network [1].');
    const sentence = bitcoin.sentences.find((s) => s.content.startsWith('Digital signatures'))!;
    expect(result.sentenceIds.get(1)).toEqual([sentence.id]);
    expect(llm.requests[0].jsonSchema?.name).toBe('grounded_answer');
  });

  it('drops markers to passages that were not retrieved or whose quote is not in them', async () => {
    const llm = fakeLlm(() => ({
      answerable: true,
      answer: 'Signatures are not enough [1][7]. Alice was tired [2, 3].',
      citations: [
        { passage: 1, quote: 'Digital signatures provide part of the solution' },
        { passage: 2, quote: 'Alice was beginning to get very tired' },
        { passage: 3, quote: 'The Queen shouted off with her head' },
        { passage: 7, quote: 'anything' },
      ],
    }));
    const result = await groundedAnswer(llm, 'q', passages, 'MARKDOWN');
    expect(result.answer).toBe('Signatures are not enough [1]. Alice was tired [2].');
    expect(result.cited).toEqual([1, 2]);
  });

  it('adds markers for verified citations the text did not mark', async () => {
    const llm = fakeLlm(() => ({ answerable: true, answer: 'Use ctrl-r.', citations: [{ passage: 3, quote: 'to search through the bash command history' }] }));
    const result = await groundedAnswer(llm, 'q', passages, 'MARKDOWN');
    expect(result.answer).toBe('Use ctrl-r. [3]');
    expect(result.cited).toEqual([3]);
  });

  it('refuses an answer that cites nothing retrieved', async () => {
    const uncited = fakeLlm(() => ({ answerable: true, answer: 'Bitcoin was invented in 2008.', citations: [] }));
    await expect(groundedAnswer(uncited, 'q', passages, 'MARKDOWN')).rejects.toBeInstanceOf(UncitedAnswerError);
    const fabricated = fakeLlm(() => ({
      answerable: true,
      answer: 'Satoshi mined the first block in 2009 [1].',
      citations: [{ passage: 1, quote: 'Satoshi mined the genesis block on 3 January 2009' }],
    }));
    await expect(groundedAnswer(fabricated, 'q', passages, 'MARKDOWN')).rejects.toBeInstanceOf(UncitedAnswerError);
    const outOfRange = fakeLlm(() => ({ answerable: true, answer: 'Yes [9].', citations: [{ passage: 9, quote: 'Digital signatures' }] }));
    await expect(groundedAnswer(outOfRange, 'q', passages, 'MARKDOWN')).rejects.toBeInstanceOf(UncitedAnswerError);
  });

  it('reports an unanswerable question as such', async () => {
    const llm = fakeLlm(() => ({ answerable: false, answer: 'The documents do not say.', citations: [] }));
    expect(await groundedAnswer(llm, 'q', passages, 'MARKDOWN')).toMatchObject({ answerable: false, cited: [] });
  });

  it('strips Markdown from a PLAIN_TEXT answer', async () => {
    const llm = fakeLlm(() => ({ answerable: true, answer: '**Use** `ctrl-r` [3].', citations: [{ passage: 3, quote: 'Use ctrl-r to search' }] }));
    expect((await groundedAnswer(llm, 'q', passages, 'PLAIN_TEXT')).answer).toBe('Use ctrl-r [3].');
  });

  it('checks quotes up to case, spacing and punctuation, or by most of their words', () => {
    const text = 'The majority decision is represented by the longest chain, which has the greatest proof-of-work.';
    expect(quoteSupported('majority decision is   represented by the LONGEST chain', text)).toBe(true);
    expect(quoteSupported('the longest chain represents the majority decision', text)).toBe(true);
    expect(quoteSupported('the shortest path wins every election', text)).toBe(false);
    expect(quoteSupported('', text)).toBe(false);
  });

  it('reads and rewrites citation markers', () => {
    expect(markerNumbers('a [2] b [1, 3] c [2][4]')).toEqual([2, 1, 3, 4]);
    expect(rewriteMarkers('a [2] b [1, 3] c [5] .', (n) => (n === 5 ? null : n * 10))).toBe('a [20] b [10][30] c.');
  });
});
