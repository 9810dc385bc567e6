// The URL fetcher against local servers on 127.0.0.1: the SSRF guard (addresses, literal
// notations, redirects, DNS answers), time and size limits, decoding, and error messages.
// Nothing here reaches the internet: private literals are refused before any connection.
import dns from 'node:dns';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { classifyAddress, type AddressKind } from '../../src/sources/fetch/addresses.js';
import { filenameFrom } from '../../src/sources/fetch/response.js';
import { checkUrlSyntax, FetchError, fetchUrl, type FetchOptions } from '../../src/sources/url-fetch.js';

type Route = (req: IncomingMessage, res: ServerResponse) => void;

const routes = new Map<string, Route>();
const hits: string[] = [];
let server: Server;
let port: number;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    hits.push(path);
    const route = routes.get(path);
    if (route) route(req, res);
    else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('no such route');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

afterEach(() => {
  routes.clear();
  hits.length = 0;
  server.closeAllConnections();
  vi.restoreAllMocks();
});

function route(path: string, handler: Route): string {
  routes.set(path, handler);
  return `${base}${path}`;
}

function options(overrides: Partial<FetchOptions> = {}): FetchOptions {
  return { allowlist: ['127.0.0.1'], maxBytes: 1024 * 1024, ...overrides };
}

/** The FetchError a fetch rejects with, and how long it took. */
async function failure(url: string, opts: FetchOptions): Promise<{ error: FetchError; ms: number }> {
  const started = performance.now();
  try {
    await fetchUrl(url, opts);
  } catch (error) {
    expect(error).toBeInstanceOf(FetchError);
    return { error: error as FetchError, ms: performance.now() - started };
  }
  throw new Error(`expected ${url} to fail`);
}

describe('fetchUrl: success', () => {
  it('fetches an allowlisted local URL with its type and filename', async () => {
    const seen: IncomingMessage[] = [];
    const url = route('/files/report%20one.txt', (req, res) => {
      seen.push(req);
      res.writeHead(200, { 'content-type': 'Text/Plain; charset=UTF-8' });
      res.end('hello folio');
    });
    const got = await fetchUrl(url, options());
    expect(Buffer.from(got.bytes).toString()).toBe('hello folio');
    expect(got.bytes).toBeInstanceOf(Uint8Array);
    expect(got.contentType).toBe('text/plain');
    expect(got.finalUrl).toBe(url);
    expect(got.filename).toBe('report one.txt');
    expect(seen[0].headers['user-agent']).toBe('Folio/1.0');
    expect(seen[0].headers.host).toBe(`127.0.0.1:${port}`);
  });

  it('takes the filename from Content-Disposition and the user agent from the options', async () => {
    let agent: string | undefined;
    const url = route('/download', (req, res) => {
      agent = req.headers['user-agent'];
      const disposition = `attachment; filename="plain.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf`;
      res.writeHead(200, { 'content-disposition': disposition });
      res.end('%PDF-1.7');
    });
    const got = await fetchUrl(url, options({ userAgent: 'Folio-test/2' }));
    expect(got.filename).toBe('résumé.pdf');
    expect(got.contentType).toBeNull();
    expect(agent).toBe('Folio-test/2');
  });

  it('reads filenames safely', () => {
    const at = new URL('https://example.com/docs/');
    expect(filenameFrom('attachment; filename="../../etc/passwd"', at)).toBe('passwd');
    expect(filenameFrom('attachment; filename=a\\b.txt', at)).toBe('b.txt');
    expect(filenameFrom("inline; filename*=iso-8859-1'en'%E9t%E9.txt", at)).toBe('été.txt');
    expect(filenameFrom('inline', at)).toBe('docs');
    expect(filenameFrom(undefined, new URL('https://example.com/'))).toBeNull();
  });

  it('decodes gzip, deflate and brotli bodies', async () => {
    const text = 'Folio compresses well. '.repeat(500);
    const encoders: [string, (b: Buffer) => Buffer][] = [
      ['gzip', gzipSync],
      ['deflate', deflateSync],
      ['br', brotliCompressSync],
    ];
    for (const [coding, encode] of encoders) {
      const url = route(`/${coding}`, (_req, res) => {
        res.writeHead(200, { 'content-encoding': coding, 'content-type': 'text/plain' });
        res.end(encode(Buffer.from(text)));
      });
      const got = await fetchUrl(url, options());
      expect(Buffer.from(got.bytes).toString()).toBe(text);
    }
  });
});

describe('fetchUrl: the address guard', () => {
  it('refuses a local address that is not allowlisted, before sending anything', async () => {
    const url = route('/secret', (_req, res) => res.end('secret'));
    const { error } = await failure(url, options({ allowlist: [] }));
    expect(error.message).toBe(
      `Folio will not fetch ${url}: 127.0.0.1 is a loopback address. If it is an internal server that Folio ` +
        `should reach, an administrator can add "127.0.0.1" to FOLIO_URL_ALLOWLIST.`,
    );
    expect(error.transient).toBe(false);
    expect(hits).toEqual([]);
  });

  it('refuses a hostname that resolves to a local address', async () => {
    const { error } = await failure(`http://localhost:${port}/secret`, options());
    expect(error.message).toContain('localhost resolves to 127.0.0.1, a loopback address');
    expect(hits).toEqual([]);
  });

  it.each([
    ['http://2130706433/', '127.0.0.1 is a loopback address'],
    ['http://0x7f.0.0.1/', '127.0.0.1 is a loopback address'],
    ['http://127.1/', '127.0.0.1 is a loopback address'],
    ['http://0/', '0.0.0.0 is an unspecified address'],
    ['http://[::1]/', '::1 is a loopback address'],
    ['http://[::ffff:7f00:1]/', '::ffff:7f00:1 is a loopback address'],
    ['http://[::ffff:10.1.2.3]/', 'is a private network address'],
    ['http://10.0.0.1/admin', '10.0.0.1 is a private network address'],
    ['http://192.168.1.1/', 'a private network address'],
    ['http://100.64.0.1/', 'a carrier-grade NAT (shared) address'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a cloud metadata service address'],
    ['http://[fd00:ec2::254]/latest/meta-data/', 'fd00:ec2::254 is a cloud metadata service address'],
    ['http://[fe80::1]/', 'a link-local address'],
    ['http://224.0.0.1/', 'a multicast address'],
    ['http://255.255.255.255/', 'the broadcast address'],
  ])('refuses the literal %s before connecting', async (url, text) => {
    const lookup = vi.spyOn(dns.promises, 'lookup');
    const { error, ms } = await failure(url, options({ allowlist: [] }));
    expect(error.message).toContain(text);
    expect(error.transient).toBe(false);
    expect(lookup).not.toHaveBeenCalled();
    expect(ms).toBeLessThan(1000);
  });

  it('refuses the metadata hostname without asking DNS', async () => {
    const lookup = vi.spyOn(dns.promises, 'lookup');
    const { error } = await failure('http://metadata.google.internal/computeMetadata/v1/', options());
    expect(error.message).toContain('metadata.google.internal is a cloud metadata service');
    expect(lookup).not.toHaveBeenCalled();
  });

  it('refuses a host when any of its addresses is private', async () => {
    vi.spyOn(dns.promises, 'lookup').mockImplementation((async () => [
      { address: '93.184.215.14', family: 4 },
      { address: '10.1.2.3', family: 4 },
    ]) as never);
    const { error } = await failure('https://mixed.example/doc.pdf', options());
    expect(error.message).toContain('mixed.example resolves to 10.1.2.3, a private network address');
  });

  it('resolves once and connects to the vetted address, so a rebinding answer is never used', async () => {
    const answers = ['127.0.0.1', '10.9.9.9'];
    const lookup = vi
      .spyOn(dns.promises, 'lookup')
      .mockImplementation((async () => [{ address: answers.shift(), family: 4 }]) as never);
    const url = route('/pinned', (req, res) => res.end(`host ${req.headers.host}`));
    const named = url.replace('127.0.0.1', 'intranet.example');
    const got = await fetchUrl(named, options({ allowlist: ['Intranet.Example'] }));
    expect(Buffer.from(got.bytes).toString()).toBe(`host intranet.example:${port}`);
    expect(lookup).toHaveBeenCalledTimes(1);
  });

  it('refuses a metadata address even for an allowlisted hostname', async () => {
    const answer = [{ address: '169.254.169.254', family: 4 }];
    vi.spyOn(dns.promises, 'lookup').mockImplementation((async () => answer) as never);
    const { error } = await failure('http://intranet.example/', options({ allowlist: ['intranet.example'] }));
    expect(error.message).toContain('intranet.example resolves to 169.254.169.254, a cloud metadata service address');
  });
});

describe('fetchUrl: redirects', () => {
  // /hop/N redirects N more times, alternating relative and absolute Location headers.
  function hops(): void {
    for (let n = 0; n <= 8; n++) {
      route(`/hop/${n}`, (_req, res) => {
        if (n === 0) {
          res.end('landed');
          return;
        }
        const location = n % 2 === 0 ? `${n - 1}?from=${n}` : `${base}/hop/${n - 1}`;
        res.writeHead(n % 3 === 0 ? 307 : 302, { location });
        res.end();
      });
    }
  }

  it('follows relative and absolute redirects up to the limit', async () => {
    hops();
    const got = await fetchUrl(`${base}/hop/5`, options());
    expect(Buffer.from(got.bytes).toString()).toBe('landed');
    expect(got.finalUrl).toBe(`${base}/hop/0`);
    expect(hits).toEqual(['/hop/5', '/hop/4', '/hop/3', '/hop/2', '/hop/1', '/hop/0']);
  });

  it('refuses more than five redirects', async () => {
    hops();
    const { error } = await failure(`${base}/hop/6`, options());
    expect(error.message).toBe(`Gave up on ${base}/hop/6 after 5 redirects (the next one pointed to ${base}/hop/0)`);
    expect(error.transient).toBe(false);
    expect(hits).not.toContain('/hop/0');
  });

  it('honours a lower redirect limit', async () => {
    hops();
    const { error } = await failure(`${base}/hop/2`, options({ maxRedirects: 1 }));
    expect(error.message).toContain('after 1 redirect (the next one pointed to');
  });

  it('refuses a redirect to a host that is not allowlisted, even one at the same address', async () => {
    route('/target', (_req, res) => res.end('must not be read'));
    const url = route('/to-localhost', (_req, res) => {
      res.writeHead(302, { location: `http://localhost:${port}/target` });
      res.end();
    });
    const { error } = await failure(url, options());
    expect(error.message).toContain(`${url} redirected to http://localhost:${port}/target, which Folio will not fetch`);
    expect(error.message).toContain('localhost resolves to 127.0.0.1, a loopback address');
    expect(error.message).toContain('"localhost" to FOLIO_URL_ALLOWLIST');
    expect(hits).toEqual(['/to-localhost']);
  });

  it('refuses redirects to private literals and to other schemes', async () => {
    const targets = ['http://10.0.0.1/internal', 'http://169.254.169.254/latest/meta-data/', 'file:///etc/passwd'];
    for (const target of targets) {
      const url = route('/bounce', (_req, res) => {
        res.writeHead(301, { location: target });
        res.end();
      });
      const { error } = await failure(url, options());
      expect(error.message).toContain(`${url} redirected to ${target}`);
      expect(error.transient).toBe(false);
    }
  });
});

describe('fetchUrl: time limits', () => {
  it('times out when the server never answers', async () => {
    const url = route('/silent', () => {});
    const { error, ms } = await failure(url, options({ totalTimeoutMs: 300 }));
    expect(error.message).toBe(`Fetching ${url} timed out after 300 ms waiting for 127.0.0.1:${port} to answer`);
    expect(error.transient).toBe(true);
    expect(ms).toBeLessThan(3000);
  });

  it('cuts a body that trickles in at the total deadline', async () => {
    const url = route('/trickle', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('.'), 20);
      res.on('close', () => clearInterval(timer));
    });
    const { error, ms } = await failure(url, options({ totalTimeoutMs: 400 }));
    expect(error.message).toMatch(/^Fetching .* timed out after 400 ms while downloading \(\d+ bytes had arrived\)$/);
    expect(error.transient).toBe(true);
    expect(ms).toBeLessThan(3000);
  });

  it('times out connecting when the TLS handshake never completes', async () => {
    const sockets: Socket[] = [];
    const mute: TcpServer = createTcpServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve));
    const mutePort = (mute.address() as AddressInfo).port;
    try {
      const { error, ms } = await failure(
        `https://127.0.0.1:${mutePort}/doc.pdf`,
        options({ connectTimeoutMs: 200, totalTimeoutMs: 10_000 }),
      );
      expect(error.message).toBe(`Could not connect to 127.0.0.1:${mutePort} within 200 ms`);
      expect(error.transient).toBe(true);
      expect(ms).toBeLessThan(3000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => mute.close(resolve));
    }
  });

  it('stops when the caller cancels', async () => {
    const url = route('/silent', () => {});
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const { error, ms } = await failure(url, options({ signal: controller.signal }));
    expect(error.message).toBe(`Fetching ${url} was cancelled`);
    expect(ms).toBeLessThan(3000);
  });
});

describe('fetchUrl: size limits', () => {
  it('refuses at once when Content-Length is over the cap', async () => {
    const url = route('/huge', (_req, res) => {
      res.writeHead(200, { 'content-length': String(100 * 1024 * 1024) });
      res.write(Buffer.alloc(1024)); // and never the rest
    });
    const { error, ms } = await failure(url, options({ totalTimeoutMs: 10_000 }));
    expect(error.message).toBe(`The file at ${url} is larger than 1 MB`);
    expect(error.transient).toBe(false);
    expect(ms).toBeLessThan(3000);
  });

  it('stops reading an endless chunked body at the cap', async () => {
    let sent = 0;
    let closed!: () => void;
    const serverSawClose = new Promise<void>((resolve) => (closed = resolve));
    const url = route('/endless', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 1);
      const pump = () => {
        while (!res.destroyed && res.write(chunk)) sent += chunk.length;
      };
      res.on('drain', pump);
      res.on('close', closed);
      pump();
    });
    const { error } = await failure(url, options({ maxBytes: 256 * 1024, totalTimeoutMs: 10_000 }));
    expect(error.message).toBe(`The file at ${url} is larger than 256 KB`);
    await serverSawClose;
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });

  it('cuts a gzip bomb at the cap on decoded bytes', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const url = route('/bomb', (_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': String(bomb.length) });
      res.end(bomb);
    });
    const { error, ms } = await failure(url, options());
    expect(error.message).toBe(`The file at ${url} is larger than 1 MB`);
    expect(ms).toBeLessThan(3000);
  });

  it('accepts a body of exactly the cap', async () => {
    const url = route('/exact', (_req, res) => res.end(Buffer.alloc(1000, 7)));
    const got = await fetchUrl(url, options({ maxBytes: 1000 }));
    expect(got.bytes.length).toBe(1000);
  });
});

describe('fetchUrl: server answers', () => {
  it.each([
    [404, 'Not Found', false],
    [403, 'Forbidden', false],
    [429, 'Too Many Requests', true],
    [500, 'Internal Server Error', true],
    [503, 'Service Unavailable', true],
  ])('reports %i as %s (transient %s)', async (status, reason, transient) => {
    const url = route('/status', (_req, res) => {
      res.writeHead(status);
      res.end('<html>error page</html>');
    });
    const { error } = await failure(url, options());
    expect(error.message).toBe(`The server answered ${status} ${reason} for ${url}`);
    expect(error.transient).toBe(transient);
  });

  it('refuses an unknown content encoding and a corrupt gzip body', async () => {
    const odd = route('/odd', (_req, res) => {
      res.writeHead(200, { 'content-encoding': 'zstd' });
      res.end('x');
    });
    expect((await failure(odd, options())).error.message).toBe(
      `The server sent ${odd} with an unsupported Content-Encoding "zstd"`,
    );
    const corrupt = route('/corrupt', (_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      res.end('this is not gzip');
    });
    const { error } = await failure(corrupt, options());
    expect(error.message).toBe(`The server sent a corrupt compressed body for ${corrupt}`);
    expect(error.transient).toBe(false);
  });

  it('reports a refused connection as transient', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const { error } = await failure(`http://127.0.0.1:${closedPort}/`, options());
    expect(error.message).toBe(`127.0.0.1:${closedPort} refused the connection for http://127.0.0.1:${closedPort}/`);
    expect(error.transient).toBe(true);
  });
});

describe('checkUrlSyntax', () => {
  it('accepts absolute http and https URLs', () => {
    expect(checkUrlSyntax('https://example.com/report.pdf')).toBeNull();
    expect(checkUrlSyntax('http://intranet.example:8080/a?b=c#d')).toBeNull();
    expect(checkUrlSyntax('http://[2001:db8::1]/')).toBeNull();
  });

  const schemes = ['file:///etc/passwd', 'ftp://example.com/file.txt', 'javascript:alert(1)', 'data:text/plain,hi'];
  it.each(schemes)('refuses the scheme of %s', async (url) => {
    expect(checkUrlSyntax(url)).toMatch(/^Only http:\/\/ and https:\/\/ URLs can be fetched, not [a-z]+:$/);
    const { error } = await failure(url, options());
    expect(error.transient).toBe(false);
  });

  it('refuses relative, malformed, overlong and credentialed URLs', () => {
    expect(checkUrlSyntax('/documents/1')).toMatch(/not a valid absolute URL/);
    expect(checkUrlSyntax('example.com/report.pdf')).toMatch(/not a valid absolute URL/);
    expect(checkUrlSyntax('')).toMatch(/not a valid absolute URL/);
    expect(checkUrlSyntax('http://')).toMatch(/not a valid absolute URL/);
    expect(checkUrlSyntax(`https://example.com/${'a'.repeat(2048)}`)).toBe('The URL is longer than 2048 characters');
    expect(checkUrlSyntax('https://user:secret@example.com/')).toBe('The URL must not contain a user name or password');
    expect(checkUrlSyntax('https://user@example.com/')).toBe('The URL must not contain a user name or password');
  });

  it('makes fetchUrl refuse credentials without connecting', async () => {
    const url = route('/creds', (_req, res) => res.end('no'));
    const { error } = await failure(url.replace('http://', 'http://admin:pw@'), options());
    expect(error.message).toBe('The URL must not contain a user name or password');
    expect(hits).toEqual([]);
  });
});

describe('classifyAddress', () => {
  const table: [string, AddressKind | null][] = [
    // IPv4
    ['8.8.8.8', null],
    ['93.184.215.14', null],
    ['172.15.255.255', null],
    ['172.32.0.1', null],
    ['100.63.255.255', null],
    ['100.128.0.0', null],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['169.254.1.1', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'reserved'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.255', 'shared'],
    ['224.0.0.251', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    // IPv6
    ['2606:4700:4700::1111', null],
    ['2001:4860:4860::8888', null],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['fc00::1', 'private'],
    ['fd12:3456:789a::1', 'private'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['ff02::1', 'multicast'],
    ['fd00:ec2::254', 'metadata'],
    ['2001:db8::1', 'reserved'],
    // IPv4 inside IPv6
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::FFFF:7F00:0001', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['::ffff:8.8.8.8', null],
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::8.8.8.8', null],
    ['2002:7f00:1::', 'loopback'],
    ['2002:a9fe:a9fe::1', 'metadata'],
    ['2002:808:808::1', null],
    ['::127.0.0.1', 'loopback'],
    ['::8.8.8.8', 'reserved'],
    // not an address: fail closed
    ['localhost', 'reserved'],
    ['', 'reserved'],
  ];

  it.each(table)('%s -> %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it('sees through the notations that URL parsing normalises', () => {
    const hostOf = (url: string) => new URL(url).hostname;
    expect(hostOf('http://2130706433/')).toBe('127.0.0.1');
    expect(classifyAddress(hostOf('http://2130706433/'))).toBe('loopback');
    expect(classifyAddress(hostOf('http://0x7f.0.0.1/'))).toBe('loopback');
    expect(classifyAddress(hostOf('http://017700000001/'))).toBe('loopback');
    expect(classifyAddress(hostOf('http://0xa9fea9fe/'))).toBe('metadata');
    expect(classifyAddress(hostOf('http://[::ffff:7f00:1]/'))).toBe('loopback');
    expect(classifyAddress(hostOf('http://[::ffff:127.0.0.1]/'))).toBe('loopback');
    expect(classifyAddress(hostOf('http://[0:0:0:0:0:ffff:a9fe:a9fe]/'))).toBe('metadata');
  });
});
