// Polls a task until it ends.
import { expect } from 'vitest';
import type { App } from '../../src/http/app.js';
import { KEYS, call } from './app.js';

export interface TaskStatusBody {
  title: string;
  message: string;
  progress: number;
  status: string;
}

/** Waits for COMPLETED or FAILED, checking on the way that progress never goes backwards. */
export async function waitForTask(app: App, identifier: string, timeoutMs = 60_000, key: string = KEYS.write): Promise<TaskStatusBody> {
  const deadline = Date.now() + timeoutMs;
  let lastProgress = 0;
  for (;;) {
    const res = await call(app, 'GET', `/api/v1/tasks/status/${identifier}`, { key });
    expect(res.statusCode).toBe(200);
    const status = res.json().data as TaskStatusBody;
    expect(status.progress).toBeGreaterThanOrEqual(lastProgress);
    lastProgress = status.progress;
    if (status.status === 'COMPLETED' || status.status === 'FAILED') return status;
    if (Date.now() > deadline) throw new Error(`task ${identifier} still ${status.status} (${status.message}) after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
