// Server-Sent Events responses. A route that streams checks and prepares what it can first
// (its errors are ordinary responses), then hands a producer to `EventStreams.send`: the reply
// is 200 text/event-stream, each event is written as it is sent (nothing buffers it on the
// way: no-cache, X-Accel-Buffering: no), comments keep a quiet connection alive, the
// producer's signal aborts when the client goes away, and a failure after the status line is
// an `error` event carrying the error body. Going through reply.send keeps the request id,
// the request log and the hooks that ran before the handler (auth, rate limit). At shutdown,
// open streams have the grace period to finish, then end with a 503 `error` event.
import { PassThrough } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../errors.js';
import { streamErrorBody } from './errors.js';

const HEARTBEAT_MS = 15_000;

/** Whether the Accept header asks for an event stream (listed, and not below JSON). */
export function acceptsEventStream(accept: string | undefined): boolean {
  if (!accept) return false;
  let stream = 0;
  let json = 0;
  for (const range of accept.split(',')) {
    const [type, ...params] = range.split(';').map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2)) || 0;
    if (type === 'text/event-stream') stream = Math.max(stream, weight);
    else if (type === 'application/json') json = Math.max(json, weight);
  }
  return stream > 0 && stream >= json;
}

/** One event as written on the wire (JSON never holds a raw line break, so one data line). */
export function eventFrame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export interface EventSink {
  send(event: string, data: unknown): void;
  /** Sets a trailer declared when the stream was opened, sent after the last event. */
  trailer(name: string, value: string): void;
  /** Aborts when the client has gone or the server shuts down. */
  readonly signal: AbortSignal;
}

export interface EventStreamOptions {
  /** How long open streams may go on once the server is closing. */
  shutdownGraceMs: number;
  /** Between keep-alive comments. */
  heartbeatMs?: number;
}

interface OpenStream {
  /** Settles when the producer has and the response is complete. */
  done: Promise<unknown>;
  stop(error: unknown): void;
}

/** How long stopped streams' last bytes may take to leave before the server closes regardless. */
const FLUSH_MS = 1000;

function delay(ms: number): { promise: Promise<void>; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return { promise, cancel: () => clearTimeout(timer) };
}

/** The event streams of one app. */
export class EventStreams {
  private readonly open = new Set<OpenStream>();
  private closing = false;
  private readonly heartbeatMs: number;

  constructor(
    app: FastifyInstance,
    private readonly options: EventStreamOptions,
  ) {
    this.heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
    app.addHook('preClose', () => this.close());
  }

  /** Answers with the events `produce` sends; `trailers` names the trailers it may set. */
  send(request: FastifyRequest, reply: FastifyReply, produce: (sink: EventSink) => Promise<void>, trailers: string[] = []): FastifyReply {
    if (this.closing) throw errors.unavailable('The server is shutting down; try again shortly');
    const body = new PassThrough();
    const controller = new AbortController();
    const trailerValues = new Map<string, string>();
    let ended = false;
    const write = (text: string) => {
      if (!ended && !body.destroyed) body.write(text);
    };
    const heartbeat = setInterval(() => write(': keep-alive\n\n'), this.heartbeatMs);
    const end = (error?: unknown) => {
      if (ended) return;
      if (error !== undefined) write(eventFrame('error', streamErrorBody(error, request)));
      ended = true;
      clearInterval(heartbeat);
      body.end();
    };
    // After the end, or early: Fastify destroys the body when the client has gone.
    body.on('close', () => {
      end();
      controller.abort(new Error('the client closed the connection'));
    });
    const stream: OpenStream = {
      done: Promise.resolve(),
      stop: (error) => {
        end(error);
        controller.abort(error);
      },
    };
    const sink: EventSink = {
      send: (event, data) => write(eventFrame(event, data)),
      trailer: (name, value) => trailerValues.set(name, value),
      signal: controller.signal,
    };
    write(': stream open\n\n');
    this.open.add(stream);
    const produced = produce(sink).then(
      () => end(),
      // Once aborted, the stream has ended already (client gone, or stopped at shutdown).
      (error: unknown) => end(controller.signal.aborted ? undefined : error),
    );
    const responded = new Promise((resolve) => reply.raw.once('close', resolve));
    stream.done = Promise.all([produced, responded]).finally(() => this.open.delete(stream));

    for (const name of trailers) {
      reply.trailer(name, async () => {
        const value = trailerValues.get(name);
        // Left unset (the stream failed): Fastify then leaves the trailer out.
        if (value === undefined) throw new Error(`trailer ${name} not set`);
        return value;
      });
    }
    return reply
      .header('content-type', 'text/event-stream')
      .header('cache-control', 'no-cache')
      .header('x-accel-buffering', 'no')
      .send(body);
  }

  /**
   * Gives open streams the grace period, then stops them. Returns once their responses are
   * complete: the server's close then finds their connections idle and closes them, where a
   * connection still busy when it looks would be kept alive.
   */
  private async close(): Promise<void> {
    this.closing = true;
    const wait = async (ms: number) => {
      const timeout = delay(ms);
      await Promise.race([Promise.all([...this.open].map((s) => s.done)), timeout.promise]);
      timeout.cancel();
    };
    if (this.open.size === 0) return;
    await wait(this.options.shutdownGraceMs);
    const shutdown = errors.unavailable('The server is shutting down; ask again');
    for (const stream of this.open) stream.stop(shutdown);
    await wait(FLUSH_MS);
  }
}
