// The SSRF guard of each hop: the host is resolved once, every address it has is vetted
// (non-public ones refused unless the host is allowlisted) and the connection is pinned to the
// vetted addresses, so DNS rebinding cannot slip past the check.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { classifyAddress, KIND_TEXT, normaliseHost } from './addresses.js';
import type { Fetch } from './context.js';
import { FetchError } from './errors.js';

const ALLOWLIST_SETTING = 'FOLIO_URL_ALLOWLIST';

/** FOLIO_URL_ALLOWLIST's hosts as the guard compares them. */
export function allowlistOf(hosts: string[]): Set<string> {
  return new Set(hosts.map(normaliseHost).filter((host) => host !== ''));
}

/** Hostnames of cloud metadata services, refused before any DNS lookup. */
const METADATA_HOSTNAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata']);

/**
 * Resolves the hop's host once and checks every address it has; returns the vetted addresses.
 * `action` names what Folio would do with the URL in refusals ('fetch', 'deliver to').
 */
export async function resolveAndVet(
  ctx: Pick<Fetch, 'allowlist' | 'controller'>,
  url: URL,
  via: URL | null,
  action = 'fetch',
): Promise<dns.LookupAddress[]> {
  const host = normaliseHost(url.hostname);
  const allowed = ctx.allowlist.has(host);
  const literal = net.isIP(host);
  const lead = via
    ? `${via.href} redirected to ${url.href}, which Folio will not ${action}`
    : `Folio will not ${action} ${url.href}`;
  const hint =
    ` If it is an internal server that Folio should reach,` +
    ` an administrator can add "${host}" to ${ALLOWLIST_SETTING}.`;
  if (!allowed && METADATA_HOSTNAMES.has(host)) {
    throw new FetchError(`${lead}: ${host} is a cloud metadata service.`, false);
  }
  const addresses = literal
    ? [{ address: host, family: literal }]
    : await untilAborted(dns.promises.lookup(host, { all: true, verbatim: true }), ctx.controller.signal);
  if (addresses.length === 0) throw new FetchError(`The host ${host} was not found (DNS)`, false);
  for (const { address } of addresses) {
    const kind = classifyAddress(address);
    // An allowlisted name passes, except to a metadata service, which only its literal address can allowlist.
    if (kind === null || (allowed && (kind !== 'metadata' || literal))) continue;
    const what = literal ? `${address} is ${KIND_TEXT[kind]}` : `${host} resolves to ${address}, ${KIND_TEXT[kind]}`;
    throw new FetchError(`${lead}: ${what}.${kind === 'metadata' ? '' : hint}`, false);
  }
  return addresses;
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error('aborted'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** A lookup that answers with the vetted addresses only: the socket cannot reach anything else. */
export function pinnedLookup(addresses: dns.LookupAddress[]): net.LookupFunction {
  return (_hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    const matching = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : [];
    const usable = matching.length > 0 ? matching : addresses;
    process.nextTick(() => {
      if (options.all) callback(null, usable);
      else callback(null, usable[0].address, usable[0].family);
    });
  };
}

export interface GuardedRequest {
  url: URL;
  method: string;
  headers: http.OutgoingHttpHeaders;
  /** What resolveAndVet returned for the URL's host. */
  addresses: dns.LookupAddress[];
  /** What Folio would do with the URL, in a refusal ('fetch', 'deliver to'). */
  action: string;
  /** Told once the connection (with TLS, its handshake) is up and vetted. */
  onConnected?: () => void;
}

/**
 * An http(s) request pinned to the vetted addresses, without an agent (no connection reuse);
 * a socket that still reaches a non-public address of a host not allowlisted is destroyed
 * with a FetchError. The caller adds its handlers and ends the request.
 */
export function guardedRequest(ctx: Pick<Fetch, 'allowlist' | 'controller'>, request: GuardedRequest): http.ClientRequest {
  const { url, onConnected } = request;
  const secure = url.protocol === 'https:';
  const allowed = ctx.allowlist.has(normaliseHost(url.hostname));
  const req = (secure ? https : http).request({
    protocol: url.protocol,
    hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
    port: url.port === '' ? undefined : Number(url.port),
    path: `${url.pathname}${url.search}`,
    method: request.method,
    headers: request.headers,
    agent: false,
    lookup: pinnedLookup(request.addresses),
    signal: ctx.controller.signal,
  });
  req.on('socket', (socket) => {
    socket.once('connect', () => {
      // Belt and braces: the pinned lookup already limits where the socket can go.
      const remote = socket.remoteAddress;
      const kind = remote === undefined ? null : classifyAddress(remote);
      if (!allowed && kind !== null) {
        req.destroy(new FetchError(`Folio will not ${request.action} ${url.href}: it connected to ${remote}, ${KIND_TEXT[kind]}.`, false));
      } else if (!secure) {
        onConnected?.();
      }
    });
    if (secure && onConnected) socket.once('secureConnect', onConnected);
  });
  return req;
}
