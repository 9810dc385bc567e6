// Fetches a document by URL (ingest, extraction), guarded against SSRF: http(s) only; every hop's host
// is resolved once, all of its addresses are vetted (loopback, private, link-local, metadata
// and other non-public ranges are refused unless the host is allowlisted) and the connection
// is pinned to a vetted address, so DNS rebinding cannot slip past the check. Redirects are
// followed by hand and re-vetted; a connect timeout and a total deadline bound the time, and
// a byte cap applied after decompression bounds memory. Error messages are shown to users.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream';
import zlib from 'node:zlib';

export interface FetchOptions {
  /** Hostnames (or literal addresses) allowed past the private-address guard (FOLIO_URL_ALLOWLIST). */
  allowlist: string[];
  /** Cap on the decoded body, in bytes. */
  maxBytes: number;
  /** DNS, TCP connect and TLS handshake of each hop; default 10 s. */
  connectTimeoutMs?: number;
  /** The whole fetch, redirects and body included; default 60 s. */
  totalTimeoutMs?: number;
  /** Default 5. */
  maxRedirects?: number;
  /** Default 'Folio/1.0'. */
  userAgent?: string;
  signal?: AbortSignal;
}

export interface FetchedResource {
  bytes: Uint8Array;
  /** The response's media type, lowercased, without parameters. */
  contentType: string | null;
  finalUrl: string;
  /** From Content-Disposition, else the last path segment of the final URL. */
  filename: string | null;
}

/** A failed fetch with a message fit for users; `transient` says whether a retry may succeed. */
export class FetchError extends Error {
  readonly transient: boolean;

  constructor(message: string, transient: boolean, options?: ErrorOptions) {
    super(message, options);
    this.name = 'FetchError';
    this.transient = transient;
  }
}

export const MAX_URL_LENGTH = 2048;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const DEFAULT_TOTAL_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_REDIRECTS = 5;
const DEFAULT_USER_AGENT = 'Folio/1.0';
const ALLOWLIST_SETTING = 'FOLIO_URL_ALLOWLIST';

/** Syntax check for the API (answered with 422): an absolute http(s) URL with a host, no credentials. */
export function checkUrlSyntax(url: string): string | null {
  if (url.length > MAX_URL_LENGTH) return `The URL is longer than ${MAX_URL_LENGTH} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'The URL is not a valid absolute URL (it should look like https://example.com/report.pdf)';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return `Only http:// and https:// URLs can be fetched, not ${parsed.protocol}`;
  }
  if (parsed.hostname === '') return 'The URL has no host';
  if (parsed.username !== '' || parsed.password !== '') {
    return 'The URL must not contain a user name or password';
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Address classification

/** Why an address is refused; null from `classifyAddress` means a public address. */
export type AddressKind =
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'unspecified'
  | 'shared'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'metadata';

const KIND_TEXT: Record<AddressKind, string> = {
  loopback: 'a loopback address',
  private: 'a private network address',
  'link-local': 'a link-local address',
  unspecified: 'an unspecified address',
  shared: 'a carrier-grade NAT (shared) address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved, non-public address',
  metadata: 'a cloud metadata service address',
};

/** Hostnames of cloud metadata services, refused before any DNS lookup. */
const METADATA_HOSTNAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata']);

// First match wins: the specific entries come before the ranges holding them.
const V4_RANGES: [string, number, AddressKind][] = [
  ['169.254.169.254', 32, 'metadata'], // AWS, GCP, Azure, OCI, DigitalOcean...
  ['169.254.170.2', 32, 'metadata'], // AWS ECS task metadata
  ['100.100.100.200', 32, 'metadata'], // Alibaba Cloud
  ['0.0.0.0', 32, 'unspecified'],
  ['255.255.255.255', 32, 'broadcast'],
  ['0.0.0.0', 8, 'reserved'], // "this network"
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'], // IETF protocol assignments
  ['192.0.2.0', 24, 'reserved'], // documentation
  ['192.88.99.0', 24, 'reserved'], // 6to4 relay anycast
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'], // benchmarking
  ['198.51.100.0', 24, 'reserved'], // documentation
  ['203.0.113.0', 24, 'reserved'], // documentation
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

const V6_RANGES: [string, number, AddressKind][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['fd00:ec2::254', 128, 'metadata'], // AWS over IPv6
  ['64:ff9b:1::', 48, 'private'], // local-use NAT64
  ['100::', 64, 'reserved'], // discard-only
  ['2001:db8::', 32, 'reserved'], // documentation
  ['fc00::', 7, 'private'], // unique local
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'private'], // deprecated site-local
  ['ff00::', 8, 'multicast'],
];

function parseIPv4(text: string): number | null {
  if (!net.isIPv4(text)) return null;
  return text.split('.').reduce((value, part) => value * 256 + Number(part), 0);
}

function parseIPv6(text: string): bigint | null {
  let s = text;
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (!net.isIPv6(s)) return null;
  const lastColon = s.lastIndexOf(':');
  const v4 = parseIPv4(s.slice(lastColon + 1));
  if (v4 !== null) {
    s = `${s.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = s.split('::');
  const head = halves[0] === '' ? [] : halves[0].split(':');
  const tail = halves.length > 1 && halves[1] !== '' ? halves[1].split(':') : [];
  const groups = [...head, ...new Array<string>(8 - head.length - tail.length).fill('0'), ...tail];
  return groups.reduce((value, group) => (value << 16n) | BigInt(parseInt(group, 16)), 0n);
}

const V4_TABLE = V4_RANGES.map(([base, bits, kind]) => ({ base: parseIPv4(base)!, bits, kind }));
const V6_TABLE = V6_RANGES.map(([base, bits, kind]) => ({ base: parseIPv6(base)!, bits, kind }));

function classifyV4(address: number): AddressKind | null {
  for (const { base, bits, kind } of V4_TABLE) {
    const size = 2 ** (32 - bits);
    if (Math.floor(address / size) === Math.floor(base / size)) return kind;
  }
  return null;
}

function inV6(address: bigint, base: bigint, bits: number): boolean {
  const shift = BigInt(128 - bits);
  return address >> shift === base >> shift;
}

const V4_MAPPED = parseIPv6('::ffff:0:0')!;
const V4_TRANSLATED = parseIPv6('::ffff:0:0:0')!;
const NAT64 = parseIPv6('64:ff9b::')!;
const SIX_TO_FOUR = parseIPv6('2002::')!;

function classifyV6(address: bigint): AddressKind | null {
  const low32 = Number(address & 0xffffffffn);
  // Forms that carry an IPv4 address reach that address, so they inherit its verdict.
  if (inV6(address, V4_MAPPED, 96) || inV6(address, V4_TRANSLATED, 96) || inV6(address, NAT64, 96)) {
    return classifyV4(low32);
  }
  if (inV6(address, SIX_TO_FOUR, 16)) return classifyV4(Number((address >> 80n) & 0xffffffffn));
  for (const { base, bits, kind } of V6_TABLE) if (inV6(address, base, bits)) return kind;
  // The rest of ::/8, IPv4-compatible forms included, is reserved and never routed.
  if (address >> 120n === 0n) return classifyV4(low32) ?? 'reserved';
  return null;
}

/**
 * Classifies an IP address (v4, v6, bracketed v6, IPv4-mapped and other embedding forms);
 * null means public. Text that is not an IP address is 'reserved', so callers fail closed.
 */
export function classifyAddress(address: string): AddressKind | null {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const v4 = parseIPv4(bare);
  if (v4 !== null) return classifyV4(v4);
  const v6 = parseIPv6(bare);
  if (v6 !== null) return classifyV6(v6);
  return 'reserved';
}

/** Lowercase, without IPv6 brackets or a trailing dot; IPv6 literals in canonical form. */
function normaliseHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.endsWith('.')) h = h.slice(0, -1);
  if (net.isIPv6(h)) {
    try {
      h = new URL(`http://[${h}]/`).hostname.slice(1, -1);
    } catch {
      // keep it as written
    }
  }
  return h;
}

// ---------------------------------------------------------------------------------------------
// The fetch

type Stop = 'deadline' | 'connect' | 'cancelled';

interface Fetch {
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

/** Fetches `url` under the SSRF guard and the size and time limits; throws FetchError. */
export async function fetchUrl(url: string, options: FetchOptions): Promise<FetchedResource> {
  const problem = checkUrlSyntax(url);
  if (problem) throw new FetchError(problem, false);
  if (!Number.isSafeInteger(options.maxBytes) || options.maxBytes < 0) {
    throw new TypeError('fetchUrl: maxBytes must be a non-negative integer');
  }
  const start = new URL(url);
  const ctx: Fetch = {
    originalUrl: start.href,
    allowlist: new Set(options.allowlist.map(normaliseHost).filter((host) => host !== '')),
    maxBytes: options.maxBytes,
    connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    totalTimeoutMs: options.totalTimeoutMs ?? DEFAULT_TOTAL_TIMEOUT_MS,
    maxRedirects: options.maxRedirects ?? DEFAULT_MAX_REDIRECTS,
    userAgent: options.userAgent ?? DEFAULT_USER_AGENT,
    controller: new AbortController(),
    stop: null,
    phase: 'connecting',
    host: start.host,
    received: 0,
  };
  const signal = options.signal;
  if (signal?.aborted) throw cancelled(ctx, signal.reason);
  const onCancel = () => halt(ctx, 'cancelled');
  signal?.addEventListener('abort', onCancel, { once: true });
  const deadline = setTimeout(() => halt(ctx, 'deadline'), ctx.totalTimeoutMs);
  let current = start;
  try {
    let via: URL | null = null;
    for (let redirects = 0; ; redirects++) {
      const hop = await fetchOnce(ctx, current, via);
      if ('resource' in hop) return hop.resource;
      if (redirects >= ctx.maxRedirects) {
        const count = `${ctx.maxRedirects} redirect${ctx.maxRedirects === 1 ? '' : 's'}`;
        const next = `the next one pointed to ${hop.location.href}`;
        throw new FetchError(`Gave up on ${ctx.originalUrl} after ${count} (${next})`, false);
      }
      via = current;
      current = hop.location;
    }
  } catch (error) {
    throw toFetchError(ctx, current, error, signal?.reason);
  } finally {
    clearTimeout(deadline);
    signal?.removeEventListener('abort', onCancel);
  }
}

function halt(ctx: Fetch, reason: Stop): void {
  if (ctx.stop !== null) return;
  ctx.stop = reason;
  ctx.controller.abort();
}

type Hop = { resource: FetchedResource } | { location: URL };

async function fetchOnce(ctx: Fetch, url: URL, via: URL | null): Promise<Hop> {
  ctx.phase = 'connecting';
  ctx.host = url.host;
  const connectTimer = setTimeout(() => halt(ctx, 'connect'), ctx.connectTimeoutMs);
  let req: http.ClientRequest | null = null;
  try {
    const addresses = await resolveAndVet(ctx, url, via);
    const sent = await send(ctx, url, addresses, () => {
      clearTimeout(connectTimer);
      ctx.phase = 'waiting';
    });
    req = sent.req;
    const res = sent.res;
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if ([301, 302, 303, 307, 308].includes(status) && location !== undefined) {
      return { location: redirectTarget(url, location) };
    }
    if (status < 200 || status > 299) throw statusError(url, status);
    const length = res.headers['content-length'];
    const codings = contentCodings(url, res);
    if (codings.length === 0 && length && /^\d+$/.test(length) && Number(length) > ctx.maxBytes) {
      throw tooLarge(url, ctx.maxBytes);
    }
    ctx.phase = 'downloading';
    const bytes = await readBody(ctx, url, res, codings);
    return {
      resource: {
        bytes,
        contentType: mediaType(res.headers['content-type']),
        finalUrl: url.href,
        filename: filenameFrom(res.headers['content-disposition'], url),
      },
    };
  } finally {
    clearTimeout(connectTimer);
    req?.destroy();
  }
}

function redirectTarget(from: URL, location: string): URL {
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    throw new FetchError(`${from.href} redirected to an invalid address (${location.slice(0, 200)})`, false);
  }
  const problem = checkUrlSyntax(next.href);
  if (problem) {
    const target = next.href.slice(0, 200);
    throw new FetchError(`${from.href} redirected to ${target}, which cannot be fetched: ${problem}`, false);
  }
  return next;
}

/** Resolves the hop's host once and checks every address it has; returns the vetted addresses. */
async function resolveAndVet(ctx: Fetch, url: URL, via: URL | null): Promise<dns.LookupAddress[]> {
  const host = normaliseHost(url.hostname);
  const allowed = ctx.allowlist.has(host);
  const literal = net.isIP(host);
  const lead = via
    ? `${via.href} redirected to ${url.href}, which Folio will not fetch`
    : `Folio will not fetch ${url.href}`;
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
function pinnedLookup(addresses: dns.LookupAddress[]): net.LookupFunction {
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

function send(
  ctx: Fetch,
  url: URL,
  addresses: dns.LookupAddress[],
  onConnected: () => void,
): Promise<{ req: http.ClientRequest; res: http.IncomingMessage }> {
  const secure = url.protocol === 'https:';
  const host = normaliseHost(url.hostname);
  const allowed = ctx.allowlist.has(host);
  return new Promise((resolve, reject) => {
    const req = (secure ? https : http).request({
      protocol: url.protocol,
      hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      headers: {
        'user-agent': ctx.userAgent,
        accept: '*/*',
        'accept-encoding': 'gzip, deflate, br',
      },
      agent: false,
      lookup: pinnedLookup(addresses),
      signal: ctx.controller.signal,
    });
    req.on('socket', (socket) => {
      socket.once('connect', () => {
        // Belt and braces: the pinned lookup already limits where the socket can go.
        const remote = socket.remoteAddress;
        const kind = remote === undefined ? null : classifyAddress(remote);
        if (!allowed && kind !== null) {
          const message = `Folio will not fetch ${url.href}: it connected to ${remote}, ${KIND_TEXT[kind]}.`;
          req.destroy(new FetchError(message, false));
        } else if (!secure) {
          onConnected();
        }
      });
      if (secure) socket.once('secureConnect', onConnected);
    });
    req.on('response', (res) => {
      res.on('error', () => {}); // read through the body stream, which sees the error
      resolve({ req, res });
    });
    req.on('error', reject);
    req.end();
  });
}

const DECODERS = new Map<string, () => Transform>([
  ['gzip', () => zlib.createGunzip()],
  ['x-gzip', () => zlib.createGunzip()],
  ['deflate', () => zlib.createInflate()],
  ['br', () => zlib.createBrotliDecompress()],
]);

/** The response's content codings in the order to undo them; throws on one we cannot decode. */
function contentCodings(url: URL, res: http.IncomingMessage): string[] {
  const header = res.headers['content-encoding'];
  if (!header) return [];
  const codings = header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  for (const coding of codings) {
    if (!DECODERS.has(coding)) {
      throw new FetchError(`The server sent ${url.href} with an unsupported Content-Encoding "${coding}"`, false);
    }
  }
  // Codings are listed in the order applied, so they are undone in reverse.
  return codings.reverse();
}

/** Reads the decoded body, stopping as soon as it passes the cap (compressed or not). */
async function readBody(ctx: Fetch, url: URL, res: http.IncomingMessage, codings: string[]): Promise<Uint8Array> {
  const chain = codings.map((coding) => DECODERS.get(coding)!());
  let body: Readable = res;
  if (chain.length > 0) {
    pipeline([res, ...chain], () => {});
    body = chain[chain.length - 1];
  }
  const onAbort = () => body.destroy(new Error('aborted'));
  if (ctx.controller.signal.aborted) onAbort();
  ctx.controller.signal.addEventListener('abort', onAbort, { once: true });
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > ctx.maxBytes) throw tooLarge(url, ctx.maxBytes);
      chunks.push(chunk);
      ctx.received = total;
    }
  } finally {
    ctx.controller.signal.removeEventListener('abort', onAbort);
    body.destroy();
    res.destroy();
  }
  // A fresh buffer, not a view into Node's shared pool.
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// Response details

function mediaType(header: string | undefined): string | null {
  const type = header?.split(';')[0].trim().toLowerCase();
  return type ? type : null;
}

/** Filename from Content-Disposition (filename* first), else the URL's last path segment. */
export function filenameFrom(disposition: string | undefined, url: URL): string | null {
  if (disposition) {
    const star = /(?:^|;)\s*filename\*\s*=\s*([\w!#$%&+^`{}~-]*)'[^']*'([^;\s]+)/i.exec(disposition);
    if (star) {
      const name = cleanFilename(percentDecode(star[2], star[1].toLowerCase() === 'iso-8859-1' ? 'latin1' : 'utf8'));
      if (name) return name;
    }
    const plain = /(?:^|;)\s*filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))/i.exec(disposition);
    if (plain) {
      const raw = plain[1] !== undefined ? plain[1].replace(/\\(.)/g, '$1') : plain[2];
      const name = cleanFilename(fromLatin1Header(raw));
      if (name) return name;
    }
  }
  const segments = url.pathname.split('/').filter((segment) => segment !== '');
  const last = segments[segments.length - 1];
  if (last === undefined) return null;
  try {
    return cleanFilename(decodeURIComponent(last));
  } catch {
    return cleanFilename(last);
  }
}

function percentDecode(text: string, encoding: 'utf8' | 'latin1'): string {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '%' && /^[0-9a-f]{2}$/i.test(text.slice(i + 1, i + 3))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(text.charCodeAt(i) & 0xff);
    }
  }
  return Buffer.from(bytes).toString(encoding);
}

/** Node reads header bytes as latin1; many servers send UTF-8 names there anyway. */
function fromLatin1Header(text: string): string {
  if (!/[\x80-\xff]/.test(text)) return text;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(text, 'latin1'));
  } catch {
    return text;
  }
}

function cleanFilename(name: string): string | null {
  const base = name.replace(/\\/g, '/').split('/').pop() ?? '';
  // eslint-disable-next-line no-control-regex
  const clean = base.replace(/[\x00-\x1f\x7f]/g, '').trim().slice(0, 255);
  return clean === '' || clean === '.' || clean === '..' ? null : clean;
}

// ---------------------------------------------------------------------------------------------
// Errors

function formatSize(bytes: number): string {
  const round = (value: number) => String(Math.round(value * 10) / 10);
  if (bytes >= 1024 * 1024) return `${round(bytes / (1024 * 1024))} MB`;
  if (bytes >= 1024) return `${round(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}

function formatDuration(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}

function tooLarge(url: URL, maxBytes: number): FetchError {
  return new FetchError(`The file at ${url.href} is larger than ${formatSize(maxBytes)}`, false);
}

function statusError(url: URL, status: number): FetchError {
  const reason = http.STATUS_CODES[status];
  const answer = reason ? `${status} ${reason}` : String(status);
  if (status >= 300 && status < 400) {
    return new FetchError(`The server answered ${answer} for ${url.href} without a usable redirect`, false);
  }
  // 408 and 429 ask the client to come back later, like the 5xx answers.
  const transient = status >= 500 || status === 408 || status === 429;
  return new FetchError(`The server answered ${answer} for ${url.href}`, transient);
}

function cancelled(ctx: Fetch, reason: unknown): FetchError {
  return new FetchError(`Fetching ${ctx.originalUrl} was cancelled`, true, { cause: reason });
}

const TRANSIENT_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'ERR_STREAM_PREMATURE_CLOSE',
]);

/** Turns whatever went wrong into a FetchError with a message fit for users. */
function toFetchError(ctx: Fetch, url: URL, error: unknown, cancelReason: unknown): FetchError {
  if (ctx.stop === 'cancelled') return cancelled(ctx, cancelReason);
  if (ctx.stop === 'connect') {
    return new FetchError(`Could not connect to ${ctx.host} within ${formatDuration(ctx.connectTimeoutMs)}`, true, {
      cause: error,
    });
  }
  if (ctx.stop === 'deadline') {
    const detail =
      ctx.phase === 'connecting'
        ? `while connecting to ${ctx.host}`
        : ctx.phase === 'waiting'
          ? `waiting for ${ctx.host} to answer`
          : `while downloading (${formatSize(ctx.received)} had arrived)`;
    const limit = formatDuration(ctx.totalTimeoutMs);
    return new FetchError(`Fetching ${ctx.originalUrl} timed out after ${limit} ${detail}`, true, { cause: error });
  }
  if (error instanceof FetchError) return error;
  const code = (error as NodeJS.ErrnoException | null)?.code ?? '';
  const host = url.host;
  const options = { cause: error };
  if (code === 'ENOTFOUND' || code === 'ENODATA') {
    return new FetchError(`The host ${url.hostname} was not found (DNS)`, false, options);
  }
  if (code === 'ECONNREFUSED') return new FetchError(`${host} refused the connection for ${url.href}`, true, options);
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ERR_STREAM_PREMATURE_CLOSE') {
    const when = ctx.phase === 'downloading' ? 'before the whole file arrived' : 'before it answered';
    return new FetchError(`The connection to ${host} was closed ${when} (${url.href})`, true, options);
  }
  if (TRANSIENT_CODES.has(code)) {
    return new FetchError(`Could not reach ${host} for ${url.href} (${code})`, true, options);
  }
  if (code.startsWith('Z_') || code.startsWith('ERR_BROTLI') || code.startsWith('ERR__ERROR_FORMAT')) {
    return new FetchError(`The server sent a corrupt compressed body for ${url.href}`, false, options);
  }
  if (code.startsWith('HPE_')) {
    return new FetchError(`${host} sent a malformed HTTP response for ${url.href}`, false, options);
  }
  if (/CERT|SELF_SIGNED|ERR_TLS/.test(code)) {
    return new FetchError(`The TLS certificate of ${host} could not be verified (${code})`, false, options);
  }
  if (code === 'EPROTO' || code.startsWith('ERR_SSL')) {
    return new FetchError(`Could not open a secure (https) connection to ${host}`, false, options);
  }
  return new FetchError(`Fetching ${url.href} failed${code ? ` (${code})` : ''}`, true, options);
}
