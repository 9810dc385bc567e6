// Identifiers found in text: e-mail addresses (obfuscated ones too), URLs normalised by the
// WHATWG parser, DOIs and telephone numbers.
import { first, type Match } from './match.js';

const EMAIL = /(?<![\p{L}\p{N}._%+-])(?:mailto:)?([\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}{2,24})(?![\p{L}\p{N}-]|\.[\p{L}\p{N}])/gu;

/** E-mail addresses, lower-cased domain, `mailto:` dropped; "name [at] host [dot] org" is read too (positions then approximate). */
export function findEmails(text: string): Match<string>[] {
  const source = /[[(]at[\])]/i.test(text) ? text.replace(/\s?[[(]at[\])]\s?/gi, '@').replace(/\s?[[(]dot[\])]\s?/gi, '.') : text;
  return [...source.matchAll(EMAIL)].map((m) => {
    const [local, domain] = m[1].split('@');
    return { value: `${local}@${domain.toLowerCase()}`, start: m.index, end: m.index + m[0].length, raw: m[0] };
  });
}

export function parseEmail(text: string): string | null {
  return first(findEmails(text));
}

const URL_WITH_SCHEME = /(?<![\p{L}])(?:https?|ftp):\/\/[^\s<>"'`{}|\\^\]]+/giu;
const URL_WWW = /(?<![\p{L}\p{N}@./-])www\.[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+(?:[/?#][^\s<>"'`{}|\\^\]]*)?/giu;
const BARE_DOMAIN = /(?<![\p{L}\p{N}@./-])[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.(?:com|org|net|edu|gov|io|dev|ai|co|info|biz|app|eu|de|uk|fr|it|es|nl|ch|at|be|se|no|dk|fi|pl|cz|jp|cn|in|au|ca|us|ru|br|tr)(?:\/[^\s<>"'`{}|\\^\]]*)?(?![\p{L}\p{N}@-])/giu;

function cleanUrl(raw: string): string {
  // Trailing punctuation belongs to the sentence; a closing bracket only if unbalanced.
  let url = raw.replace(/[.,;:!?'"»”’]+$/u, '');
  while (url.endsWith(')') && (url.match(/\(/g) ?? []).length < (url.match(/\)/g) ?? []).length) url = url.slice(0, -1);
  return url.replace(/[.,;:!?]+$/u, '');
}

/**
 * URLs, normalised by the WHATWG URL parser: "https://x.org/a" as is, "www.bitcoin.org" ->
 * "https://www.bitcoin.org/". With `bareDomains`, "mozilla.org/about" counts too.
 */
export function findUrls(text: string, options: { bareDomains?: boolean } = {}): Match<string>[] {
  const out: Match<string>[] = [];
  const patterns = [URL_WITH_SCHEME, URL_WWW, ...(options.bareDomains ? [BARE_DOMAIN] : [])];
  for (const re of patterns) {
    for (const m of text.matchAll(re)) {
      const raw = cleanUrl(m[0]);
      const start = m.index;
      const end = start + raw.length;
      if (out.some((o) => start < o.end && end > o.start)) continue;
      // The domain of an e-mail address is no URL.
      if (text[start - 1] === '@') continue;
      try {
        const url = new URL(/^[a-z]+:\/\//i.test(raw) ? raw : `https://${raw}`);
        if (!url.hostname.includes('.') && url.hostname !== 'localhost') continue;
        out.push({ value: url.href, start, end, raw });
      } catch {
        // not a URL after all
      }
    }
  }
  return out.sort((a, b) => a.start - b.start);
}

export function parseUrl(text: string, options?: { bareDomains?: boolean }): string | null {
  return first(findUrls(text, options));
}

/** DOIs ("doi:10.3906/sag-0902-21", "https://doi.org/10.1000/xyz") as the bare "10.xxx/yyy". */
export function findDois(text: string): Match<string>[] {
  return [...text.matchAll(/\b(10\.\d{4,9}\/[^\s"<>]+)/g)].map((m) => {
    const value = m[1].replace(/[.,;:)\]]+$/, '');
    return { value, start: m.index, end: m.index + value.length, raw: value };
  });
}

/** Telephone numbers: a + or a digit, then at least 7 digits in groups. */
export function findPhones(text: string): Match<string>[] {
  return [...text.matchAll(/(?<![\p{L}\p{N}])(\+?\(?\d[\d\s().\-/]{6,}\d)(?![\p{N}])/gu)]
    .filter((m) => (m[1].match(/\d/g) ?? []).length >= 7 && (m[1].match(/\d/g) ?? []).length <= 15)
    .filter((m) => !/^\d{4}-\d{2}-\d{2}$/.test(m[1].trim()))
    .map((m) => ({ value: m[1].trim(), start: m.index, end: m.index + m[0].length, raw: m[1] }));
}
