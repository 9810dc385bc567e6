// A request whose Content-Length declares more than its route takes is answered 413 at once,
// before auth and before any of the body is read, and its connection is closed after the
// answer: reading (or waiting for) a body that will be refused anyway only ties up a socket.
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors, type AppError } from '../errors.js';
import { errorBody, type ResponseShape } from './envelope.js';

/** An HTTP/1.1 answer written straight to a socket, for answers Fastify's reply cannot give. */
export function rawAnswer(status: number, body: string, headers: Record<string, string> = {}): string {
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    'Connection: close',
  ];
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

/**
 * Reads what is left of a request's body and throws it away, until it ends, `maxBytes` have
 * come or `ms` have passed: a socket closed with unread data is reset, and the reset can
 * destroy an answer before the client has read it.
 */
export function discardBody(raw: IncomingMessage, maxBytes: number, ms: number): Promise<void> {
  if (raw.complete || raw.readableEnded || raw.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let seen = 0;
    const finish = () => {
      clearTimeout(timer);
      raw.off('data', onData).off('end', finish).off('error', finish).off('close', finish);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > maxBytes) finish();
    };
    const timer = setTimeout(finish, ms);
    raw.on('data', onData).once('end', finish).once('error', finish).once('close', finish);
    raw.resume();
  });
}

// After an answer given at once, what the client still sends is discarded for a while before
// the connection is closed (as a web server's lingering close does).
const LINGER_MS = 5_000;

function refuseAtOnce(request: FastifyRequest, reply: FastifyReply, error: AppError, lingerBytes: number): void {
  const socket = request.raw.socket;
  const shape: ResponseShape = request.routeOptions.config?.shape ?? 'envelope';
  const body = errorBody(shape, error);
  request.log.info({ statusCode: error.status, declared: request.headers['content-length'] }, 'declared body over the limit refused');
  if (!(socket instanceof Socket)) {
    // No connection of our own to write to (a request injected in process): an ordinary answer.
    void reply.code(error.status).header('connection', 'close').send(body);
    return;
  }
  reply.hijack();
  socket.write(rawAnswer(error.status, JSON.stringify(body), { 'x-request-id': request.id }));
  // Half-closes: the answer and a FIN go out, and the socket still reads until lingering ends.
  socket.end();
  void discardBody(request.raw, lingerBytes, LINGER_MS).then(() => socket.destroy());
}

/**
 * Registers the check; it must come before auth so a refused body costs no key lookup.
 * `lingerBytes` bounds what is read and discarded after the answer.
 */
export function registerBodyLimit(app: FastifyInstance, lingerBytes: number): void {
  app.addHook('onRequest', (request, reply, done) => {
    const declared = Number(request.headers['content-length']);
    const limit = request.routeOptions.bodyLimit;
    if (limit !== undefined && declared > limit) {
      refuseAtOnce(request, reply, errors.payloadTooLarge(limit), lingerBytes);
      return;
    }
    done();
  });
}
