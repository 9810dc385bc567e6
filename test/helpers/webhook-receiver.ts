// A local webhook receiver for tests: an HTTP server on 127.0.0.1 that records every POST
// (headers and raw body) and answers with the status a test chooses; and the signature check
// exactly as docs/guides/webhooks.md documents it.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

// The recipe of docs/guides/webhooks.md, verbatim.
function verifyFolioSignature(secret: string, header: string, rawBody: string, toleranceSeconds = 300): boolean {
  const fields = Object.fromEntries(header.split(',').map((part) => part.split('=', 2)));
  const t = Number(fields.t);
  if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > toleranceSeconds) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${rawBody}`).digest();
  const given = Buffer.from(fields.v1 ?? '', 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export { verifyFolioSignature };

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  event: { id: string; type: string; created_at: string; data: Record<string, unknown> };
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Chooses each answer's status from the request and how many came before it on this path. */
  respond: (request: Received, previous: number) => number;
  /** Resolves with the received requests once `predicate` holds of them. */
  waitFor(predicate: (received: Received[]) => boolean, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<Receiver> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let event: Received['event'];
      try {
        event = JSON.parse(body) as Received['event'];
      } catch {
        event = { id: '', type: '', created_at: '', data: {} };
      }
      const request = { path: req.url ?? '/', headers: req.headers, body, event };
      const previous = received.filter((r) => r.path === request.path).length;
      received.push(request);
      res.statusCode = receiver.respond(request, previous);
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as AddressInfo).port;
  const receiver: Receiver = {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    received,
    respond: () => 200,
    async waitFor(predicate, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > deadline) throw new Error(`receiver: condition not met within ${timeoutMs} ms; got ${received.map((r) => `${r.path} ${r.event.type}`).join(', ') || 'nothing'}`);
        await new Promise((r) => setTimeout(r, 25));
      }
      return received;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}
