// Classifies IP addresses for the fetch guard: loopback, private, link-local, metadata and the
// other non-public ranges, including IPv6 forms that embed an IPv4 address; and normalises hosts
// so the allowlist and the checks compare like with like.
import net from 'node:net';

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

/** How refusals name each kind, in messages shown to users. */
export const KIND_TEXT: Record<AddressKind, string> = {
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
export function normaliseHost(host: string): string {
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
