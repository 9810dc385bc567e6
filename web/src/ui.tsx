// Pieces every view uses: the error states, JSON fields that validate as you type, the
// score bar, highlighting, and polling a task until it ends.
import { Fragment, type ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, call, type Answer } from './api';

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  if (!(error instanceof ApiError)) return <p class="error" role="alert">{String(error)}</p>;
  // The shell's banner says the network is down, once for every view.
  if (error.status === 0) return null;
  let text: ComponentChildren;
  if (error.status === 401) text = `Unauthorized (401): ${error.message}. Paste a valid key.`;
  else if (error.status === 403) text = `Forbidden (403): ${error.message}`;
  else if (error.status === 429)
    text = `Rate limited (429): retry in ${error.retryAfter ?? '?'} s.`;
  else if (error.issues.length > 0)
    text = (
      <>
        Invalid request (422):
        <ul>
          {error.issues.map((i) => (
            <li key={i.loc.join('.')}>
              <code>{i.loc.join('.')}</code>: {i.msg}
            </li>
          ))}
        </ul>
      </>
    );
  else text = `${error.code} (${error.status}): ${error.message}`;
  return (
    <div class="error" role="alert" data-status={error.status}>
      {text}
    </div>
  );
}

/** Parses a JSON text field: undefined when empty, an Error when malformed or not an object. */
export function parseJsonObject(text: string): Record<string, unknown> | undefined | Error {
  if (text.trim() === '') return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return new Error('must be a JSON object');
    return value as Record<string, unknown>;
  } catch (e) {
    return e as Error;
  }
}

export function JsonField(props: { label: string; value: string; onInput: (v: string) => void; rows?: number; placeholder?: string }) {
  const parsed = parseJsonObject(props.value);
  const id = `json-${props.label.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <textarea
        id={id}
        rows={props.rows ?? 3}
        value={props.value}
        placeholder={props.placeholder}
        aria-invalid={parsed instanceof Error}
        spellcheck={false}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
      {parsed instanceof Error && <small class="error-text">Invalid JSON: {parsed.message}</small>}
    </div>
  );
}

/** The relevance and the two parts it mixes, each with a bar of its value (0 to 1). */
export function ScoreBar({ relevance, semantic, keyword }: { relevance: number; semantic: number; keyword: number }) {
  const rows: [string, number][] = [
    ['relevance', relevance],
    ['semantic', semantic],
    ['keyword', keyword],
  ];
  return (
    <div class="scores">
      {rows.map(([name, value]) => (
        <Fragment key={name}>
          <span>{name}</span>
          <span class="bar" aria-hidden="true">
            <span class={`fill ${name}`} style={{ width: `${Math.max(0, Math.min(1, value)) * 100}%` }} />
          </span>
          <span class="score-value">{value.toFixed(3)}</span>
        </Fragment>
      ))}
    </div>
  );
}

/** The text with each word of the query marked: whole words, case-insensitive, 3+ letters
 * (shorter ones are mostly stop words, which the keyword score ignores too). */
export function Highlighted({ text, query }: { text: string; query: string }) {
  const terms = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? [])];
  if (terms.length === 0) return <>{text}</>;
  const parts = text.split(new RegExp(`(?<![\\p{L}\\p{N}])(${terms.join('|')})(?![\\p{L}\\p{N}])`, 'giu'));
  return <>{parts.map((p, i) => (i % 2 === 1 ? <mark key={i}>{p}</mark> : p))}</>;
}

type TaskStatus = Answer<'/api/v1/tasks/status/{task_identifier}', 'get'>['data'];
const ENDED = new Set(['COMPLETED', 'FAILED']);

/** Polls a task's status each second until it is COMPLETED or FAILED. */
export function useTaskStatus(taskId: string | null): { status: TaskStatus | null; error: unknown } {
  const [status, setStatus] = useState<TaskStatus | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (!taskId) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout>;
    const poll = async () => {
      try {
        const res = await call('get', '/api/v1/tasks/status/{task_identifier}', { path: { task_identifier: taskId } });
        if (stopped) return;
        setStatus(res.data);
        setError(null);
        if (ENDED.has(res.data.status)) return;
      } catch (e) {
        if (stopped) return;
        setError(e);
        // A lost key ends the polling; anything else (429, network) is retried.
        if (e instanceof ApiError && (e.status === 401 || e.status === 403 || e.status === 404)) return;
      }
      timer = setTimeout(poll, 1000);
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [taskId]);
  return { status, error };
}

export function TaskBadge({ status }: { status: TaskStatus | null }) {
  if (!status) return <span class="badge">…</span>;
  return (
    <span class={`badge ${status.status.toLowerCase()}`} data-status={status.status}>
      {status.status} {status.status !== 'COMPLETED' && status.status !== 'FAILED' ? `${status.progress}%` : ''}
    </span>
  );
}
