// The state one fetch carries across its hops: its limits, the controller that aborts it, and
// what it was doing when it stopped, which the error messages report.

type Stop = 'deadline' | 'connect' | 'cancelled';

export interface Fetch {
  readonly originalUrl: string;
  readonly allowlist: Set<string>;
  readonly maxBytes: number;
  readonly connectTimeoutMs: number;
  readonly totalTimeoutMs: number;
  readonly maxRedirects: number;
  readonly userAgent: string;
  readonly controller: AbortController;
  stop: Stop | null;
  phase: 'connecting' | 'waiting' | 'downloading';
  host: string;
  received: number;
}

export function halt(ctx: Fetch, reason: Stop): void {
  if (ctx.stop !== null) return;
  ctx.stop = reason;
  ctx.controller.abort();
}
