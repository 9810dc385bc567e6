// Answers: a question, the answer with its sources (each linked to its page), and what the
// optimise flags changed.
import { useState } from 'preact/hooks';
import { call, type Answer } from '../api';
import { ErrorNote } from '../ui';
import { Filters, useFilterForm } from './search';

type Result = Answer<'/api/v1/documents/answer', 'post'>['data'];

export function AnswerView() {
  const [question, setQuestion] = useState('');
  const [topK, setTopK] = useState(5);
  const form = useFilterForm();
  const { optimizeMetadata, setOptimizeMetadata, error, busy, invalid } = form;
  const [optimizeQuestion, setOptimizeQuestion] = [form.optimizeText, form.setOptimizeText];
  const [result, setResult] = useState<Result | null>(null);

  const ask = (e: Event) =>
    form.submit(e, async (filters) => {
      const res = await call('post', '/api/v1/documents/answer', {
        body: { question, format: 'PLAIN_TEXT', top_k: topK, ...filters, optimize_question: optimizeQuestion, optimize_metadata: optimizeMetadata },
      });
      setResult(res.data);
    });

  return (
    <section>
      <h1>Answers</h1>
      <form class="card" onSubmit={ask}>
        <label for="question">Question</label>
        <input id="question" value={question} onInput={(e) => setQuestion(e.currentTarget.value)} />
        <label class="inline">
          sources (top_k)
          <input type="number" min={1} max={50} value={topK} onInput={(e) => setTopK(Number(e.currentTarget.value))} />
        </label>
        <Filters {...form} />
        <div class="row wrap">
          <label class="inline">
            <input type="checkbox" checked={optimizeQuestion} onChange={(e) => setOptimizeQuestion(e.currentTarget.checked)} /> optimise question
          </label>
          <label class="inline">
            <input type="checkbox" checked={optimizeMetadata} onChange={(e) => setOptimizeMetadata(e.currentTarget.checked)} /> optimise metadata
          </label>
        </div>
        <button type="submit" disabled={busy || invalid || !question.trim()}>
          Ask
        </button>
      </form>
      <ErrorNote error={error} />
      {result && (
        <div class="card">
          <h2>Answer</h2>
          <p class="content" data-testid="answer">
            {result.answer || 'No answer found in the documents.'}
          </p>
          {(optimizeQuestion || optimizeMetadata) && (
            <p class="hint">
              Optimised question: <code>{result.optimized_question}</code>, metadata: <code>{JSON.stringify(result.optimized_metadata)}</code>
            </p>
          )}
          <h3>Sources</h3>
          <ol>
            {result.sources.map((s) => (
              <li key={`${s.document_id}-${s.page_number}`}>
                <a href={`#/documents/${s.document_id}?page=${s.page_number}`} data-testid="answer-source">
                  Document {s.document_id}, page {s.page_number}
                </a>{' '}
                (relevance {s.relevance})
              </li>
            ))}
          </ol>
        </div>
      )}
    </section>
  );
}
