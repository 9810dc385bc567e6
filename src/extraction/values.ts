// Typed value parsers for extraction: numbers, money, dates, times, booleans, e-mail
// addresses and URLs as they are written in documents, each turned into the JSON value a
// schema asks for. Every `find*` returns all matches in a text with their positions (the
// offline extractor scores them by where they are); every `parse*` the first match or null.

export interface Match<T> {
  value: T;
  start: number;
  end: number;
  raw: string;
}

function first<T>(matches: Match<T>[]): T | null {
  return matches.length > 0 ? matches[0].value : null;
}

// ---------------------------------------------------------------------------------------------
// Numbers

const MULTIPLIERS: Record<string, number> = {
  thousand: 1e3,
  k: 1e3,
  million: 1e6,
  mio: 1e6,
  mn: 1e6,
  m: 1e6,
  billion: 1e9,
  bn: 1e9,
  b: 1e9,
  trillion: 1e12,
  tn: 1e12,
};

// A number as written: sign or accounting parentheses, digit groups with , . ' or thin/normal
// spaces, a decimal part, an exponent, and a scale word or an attached k/M/bn suffix.
const NUMBER =
  /(?<![\p{L}\p{N}.,])(?<open>\()?(?<sign>[-+\u2212\u2013])?\s?(?<currencyBefore>[$€£¥₹₩₽¢]|(?:USD|EUR|GBP|JPY|CHF|CAD|AUD|CNY|INR|SEK|NOK|DKK|PLN)\s?)?(?<digits>\d{1,3}(?:[,'\u00a0\u202f]\d{3})+(?:[.,]\d+)?|\d{1,3}(?:\.\d{3}){2,}(?:,\d+)?|\d{1,3}(?:\.\d{3})+,\d+|\d+(?:[.,]\d+)?|[.,]\d+)(?<exp>[eE][-+]?\d{1,3})?(?:\s?(?<scale>[Tt]housand|[Mm]illion|[Bb]illion|[Tt]rillion|[Mm]io|[Mm]n|[Bb]n|[Tt]n)\b|(?<suffix>[kKMB]|bn)(?![\p{L}\p{N}]))?(?<close>\))?/gu;

/** Reads one run of digits and separators ("1,234.50", "1.234,50", "24,21", "1 000") as a number. */
export function readDigits(digits: string): number | null {
  const s = digits.replace(/[\s\u00a0\u202f']/g, '');
  const commas = (s.match(/,/g) ?? []).length;
  const dots = (s.match(/\./g) ?? []).length;
  let normalized: string;
  if (commas > 0 && dots > 0) {
    // The last separator is the decimal one: 1,234.50 or 1.234,50.
    normalized = s.lastIndexOf(',') > s.lastIndexOf('.') ? s.replace(/\./g, '').replace(',', '.') : s.replace(/,/g, '');
  } else if (commas > 1) {
    normalized = s.replace(/,/g, '');
  } else if (commas === 1) {
    // 1,234 groups thousands; 24,21 and 0,5 are decimal commas.
    const [whole, frac] = s.split(',');
    normalized = frac.length === 3 && whole !== '0' && whole !== '' ? whole + frac : `${whole || '0'}.${frac}`;
  } else if (dots > 1) {
    normalized = s.replace(/\./g, '');
  } else {
    normalized = s.startsWith('.') ? `0${s}` : s;
  }
  const value = Number(normalized);
  return Number.isFinite(value) ? value : null;
}

interface NumberMatchValue {
  value: number;
  currency: string | null;
  percent: boolean;
  /** Written in parentheses: "(1,234.50)", a negative amount in accounts. */
  parenthesized: boolean;
}

const CURRENCY_SYMBOLS: Record<string, string> = {
  $: 'USD',
  '€': 'EUR',
  '£': 'GBP',
  '¥': 'JPY',
  '₹': 'INR',
  '₩': 'KRW',
  '₽': 'RUB',
};

const CURRENCY_AFTER = /^\s?(?:([$€£¥₹₩₽])|(USD|EUR|GBP|JPY|CHF|CAD|AUD|CNY|INR|SEK|NOK|DKK|PLN)\b|(dollars?|euros?|pounds?|yen)\b)/iu;
const CURRENCY_WORDS: Record<string, string> = { dollar: 'USD', dollars: 'USD', euro: 'EUR', euros: 'EUR', pound: 'GBP', pounds: 'GBP', yen: 'JPY' };

function findNumberValues(text: string): Match<NumberMatchValue>[] {
  const out: Match<NumberMatchValue>[] = [];
  for (const m of text.matchAll(NUMBER)) {
    const g = m.groups!;
    let value = readDigits(g.digits);
    if (value === null) continue;
    if (g.exp) value *= 10 ** Number(g.exp.slice(1));
    const scale = (g.scale ?? g.suffix ?? '').toLowerCase();
    if (scale) value *= MULTIPLIERS[scale] ?? 1;
    if (g.sign !== undefined && g.sign !== '+') value = -value;
    let parenthesized = g.open !== undefined && g.close !== undefined;
    let end = m.index + m[0].length;
    // An unmatched parenthesis belongs to the text around, not to the number.
    let start = m.index;
    let raw = m[0];
    if (g.open !== undefined && g.close === undefined) {
      start += 1;
      raw = raw.slice(1);
    }
    if (g.close !== undefined && g.open === undefined) {
      end -= 1;
      raw = raw.slice(0, -1);
    }
    let currency: string | null = null;
    if (g.currencyBefore) {
      const c = g.currencyBefore.trim();
      currency = CURRENCY_SYMBOLS[c] ?? c.toUpperCase();
    }
    const after = text.slice(end).match(CURRENCY_AFTER);
    if (!currency && after) {
      currency = after[1] ? CURRENCY_SYMBOLS[after[1]] : after[2] ? after[2].toUpperCase() : CURRENCY_WORDS[after[3].toLowerCase()];
    }
    // "$ (5.00)" and "(5.00) €" are parenthesized too.
    if (!parenthesized && /\(\s*[$€£]?\s*$/.test(text.slice(Math.max(0, start - 4), start)) && /^\s?[$€£]?\s?\)/.test(text.slice(end))) parenthesized = true;
    const percent = /^\s?(?:%|percent\b|per cent\b)/i.test(text.slice(end));
    out.push({ value: { value, currency, percent, parenthesized }, start, end, raw });
  }
  return out;
}

/** Every number in the text ("1,234.50" -> 1234.5, "1.234,50" -> 1234.5, "-12" -> -12, "2.5 million" -> 2500000). */
export function findNumbers(text: string): Match<number>[] {
  return findNumberValues(text).map((m) => ({ ...m, value: m.value.value }));
}

export function parseNumber(text: string): number | null {
  return first(findNumbers(text));
}

/** Integers only: "1,200" -> 1200; "24.21" is no integer (never rounded). */
export function findIntegers(text: string): Match<number>[] {
  return findNumbers(text).filter((m) => Number.isSafeInteger(m.value));
}

export function parseInteger(text: string): number | null {
  const number = parseNumber(text);
  return number !== null && Number.isSafeInteger(number) ? number : null;
}

export interface Money {
  amount: number;
  currency: string | null;
}

/**
 * Amounts of money: "$1,234.50" -> 1234.5 USD, "1.234,50 €" -> 1234.5 EUR, "USD 99" -> 99,
 * "-$5" and "($5.00)" (accounting) -> -5. Numbers with a currency come first; bare numbers after them.
 */
export function findMoney(text: string): Match<Money>[] {
  const all = findNumberValues(text)
    .filter((m) => !m.value.percent)
    .map((m) => {
      const amount = m.value.parenthesized && m.value.value > 0 ? -m.value.value : m.value.value;
      return { ...m, value: { amount: Math.round(amount * 1e6) / 1e6, currency: m.value.currency } };
    });
  return [...all.filter((m) => m.value.currency !== null), ...all.filter((m) => m.value.currency === null)];
}

export function parseMoney(text: string): number | null {
  const found = findMoney(text);
  return found.length > 0 ? found[0].value.amount : null;
}

/** The currency of the first amount ("$5" -> "USD", "12 EUR" -> "EUR"), or a bare code or symbol. */
export function parseCurrency(text: string): string | null {
  const withCurrency = findMoney(text).find((m) => m.value.currency !== null);
  if (withCurrency) return withCurrency.value.currency;
  const code = text.match(/\b(USD|EUR|GBP|JPY|CHF|CAD|AUD|CNY|INR|SEK|NOK|DKK|PLN|KRW|RUB)\b/);
  if (code) return code[1];
  const symbol = text.match(/[$€£¥₹₩₽]/);
  return symbol ? CURRENCY_SYMBOLS[symbol[0]] : null;
}

/** Percentages: "12.5%" -> 12.5 (the number as written, not a fraction). */
export function findPercents(text: string): Match<number>[] {
  return findNumberValues(text)
    .filter((m) => m.value.percent)
    .map((m) => ({ ...m, value: m.value.value }));
}

// ---------------------------------------------------------------------------------------------
// Dates and times

const MONTHS: Record<string, number> = {};
const MONTH_NAMES: [string[], number][] = [
  [['january', 'jan', 'januar', 'janvier', 'enero', 'gennaio', 'jänner'], 1],
  [['february', 'feb', 'febr', 'februar', 'février', 'fevrier', 'febrero', 'febbraio'], 2],
  [['march', 'mar', 'märz', 'maerz', 'mars', 'marzo'], 3],
  [['april', 'apr', 'avril', 'abril', 'aprile'], 4],
  [['may', 'mai', 'mayo', 'maggio'], 5],
  [['june', 'jun', 'juni', 'juin', 'junio', 'giugno'], 6],
  [['july', 'jul', 'juli', 'juillet', 'julio', 'luglio'], 7],
  [['august', 'aug', 'août', 'aout', 'agosto'], 8],
  [['september', 'sep', 'sept', 'septembre', 'septiembre', 'settembre'], 9],
  [['october', 'oct', 'oktober', 'okt', 'octobre', 'octubre', 'ottobre'], 10],
  [['november', 'nov', 'novembre', 'noviembre'], 11],
  [['december', 'dec', 'dezember', 'dez', 'décembre', 'decembre', 'diciembre', 'dicembre'], 12],
];
for (const [names, month] of MONTH_NAMES) for (const name of names) MONTHS[name] = month;

const MONTH = `(?<month>${Object.keys(MONTHS)
  .sort((a, b) => b.length - a.length)
  .join('|')})\\.?`;
const DAY = '(?<day>[0-3]?\\d)(?:st|nd|rd|th|\\.)?';
// Two-digit years only with an apostrophe ("Feb 25 '09"): "March 3, 12 people" is no date.
const YEAR = "(?<year>'\\d{2}|\\d{4})";

const DATE_PATTERNS: { re: RegExp; order: 'ymd' | 'mdy' | 'dmy' | 'numeric' }[] = [
  // 2019-02-15, 2019/02/15, 2019.02.15, 2019-02-15T10:00Z
  { re: /(?<![\d.])(?<year>\d{4})[-/.](?<month>\d{1,2})[-/.](?<day>\d{1,2})(?![\d])/g, order: 'ymd' },
  // February 25, 2009 / Feb. 25 2009 / February 25th, 2009
  { re: new RegExp(`(?<![\\p{L}])${MONTH}\\s+${DAY},?\\s+${YEAR}(?![\\d])`, 'giu'), order: 'mdy' },
  // 25 February 2009 / 25th of February, 2009 / 25-Feb-2009 / 25. Februar 2009
  { re: new RegExp(`(?<![\\d])${DAY}(?:\\s+of)?[\\s-]+${MONTH},?[\\s-]+${YEAR}(?![\\d])`, 'giu'), order: 'dmy' },
  // 25.02.2009, 02/25/2009, 15/02/19, 25-02-2009
  { re: /(?<![\d./-])(?<a>\d{1,2})(?<sep>[./-])(?<b>\d{1,2})\k<sep>(?<year>\d{4}|\d{2})(?![\d]|[./-]\d)/g, order: 'numeric' },
];

function fullYear(year: string): number {
  const digits = year.replace("'", '');
  const n = Number(digits);
  if (digits.length === 4) return n;
  return n < 50 ? 2000 + n : 1900 + n;
}

function validDate(year: number, month: number, day: number): boolean {
  if (year < 1000 || year > 9999 || month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function isoDate(year: number, month: number, day: number): string {
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

export interface DateOptions {
  /** Numeric dates like 03/04/2020: day first (03 = day) or month first (US). Default: month first unless impossible. */
  dayFirst?: boolean;
}

/**
 * Calendar dates in ISO form (YYYY-MM-DD): "February 25, 2009", "25 Feb 2009", "2009-02-25",
 * "25.02.2009" (dots: day first), "02/25/2009" and "15/02/2019" (slashes: month first unless
 * the first number cannot be a month). Month-and-year alone is no date.
 */
export function findDates(text: string, options: DateOptions = {}): Match<string>[] {
  const found: Match<string>[] = [];
  for (const { re, order } of DATE_PATTERNS) {
    re.lastIndex = 0;
    for (const m of text.matchAll(re)) {
      const g = m.groups!;
      let year: number;
      let month: number;
      let day: number;
      if (order === 'numeric') {
        const a = Number(g.a);
        const b = Number(g.b);
        year = fullYear(g.year);
        const dayFirst = g.sep === '.' || options.dayFirst === true || a > 12;
        [day, month] = dayFirst && b <= 12 ? [a, b] : [b, a];
      } else {
        year = fullYear(g.year);
        month = /^\d+$/.test(g.month) ? Number(g.month) : MONTHS[g.month.toLowerCase().replace(/\.$/, '')];
        day = Number(g.day);
      }
      if (!validDate(year, month, day)) continue;
      const start = m.index;
      const end = start + m[0].length;
      if (found.some((f) => start < f.end && end > f.start)) continue;
      found.push({ value: isoDate(year, month, day), start, end, raw: m[0] });
    }
  }
  return found.sort((a, b) => a.start - b.start);
}

export function parseDate(text: string, options?: DateOptions): string | null {
  return first(findDates(text, options));
}

const TIME = /(?<![\d:])(?<h>[01]?\d|2[0-3])(?::(?<m>[0-5]\d))(?::(?<s>[0-5]\d)(?:\.\d+)?)?\s?(?<ampm>[ap]\.?m\.?)?(?:\s?(?<zone>Z|UTC|GMT|[+-]\d{2}:?\d{2}))?(?![\d])|(?<![\d:])(?<h2>1[0-2]|0?[1-9])\s?(?<ampm2>[ap]\.?m\.?)(?![\p{L}])/giu;

function zoneOf(zone: string | undefined): string {
  if (!zone || /^(z|utc|gmt)$/i.test(zone)) return 'Z';
  const digits = zone.replace(':', '');
  return `${digits.slice(0, 3)}:${digits.slice(3)}`;
}

/** Times of day as HH:MM:SS (24 h): "3:45 PM" -> "15:45:00", "10:00" -> "10:00:00", "9am" -> "09:00:00". */
export function findTimes(text: string): Match<{ time: string; zone: string | null }>[] {
  const out: Match<{ time: string; zone: string | null }>[] = [];
  for (const m of text.matchAll(TIME)) {
    const g = m.groups!;
    let hour = Number(g.h ?? g.h2);
    const ampm = (g.ampm ?? g.ampm2 ?? '').toLowerCase();
    if (ampm.startsWith('p') && hour < 12) hour += 12;
    if (ampm.startsWith('a') && hour === 12) hour = 0;
    const time = `${String(hour).padStart(2, '0')}:${g.m ?? '00'}:${g.s ?? '00'}`;
    out.push({ value: { time, zone: g.zone ? zoneOf(g.zone) : null }, start: m.index, end: m.index + m[0].length, raw: m[0] });
  }
  return out;
}

export function parseTime(text: string): string | null {
  const found = findTimes(text);
  return found.length > 0 ? found[0].value.time : null;
}

/**
 * Date-times as RFC 3339 ("2019-02-15T10:30:00Z"): a date followed closely by a time; a time
 * without a zone is taken as UTC, a date without a time as midnight UTC.
 */
export function findDateTimes(text: string, options?: DateOptions): Match<string>[] {
  const times = findTimes(text);
  return findDates(text, options).map((date) => {
    const time = times.find((t) => t.start >= date.end && t.start - date.end <= 6 && /^[\sT,]*(?:at\s*)?$/i.test(text.slice(date.end, t.start)));
    if (!time) return { ...date, value: `${date.value}T00:00:00Z` };
    return { value: `${date.value}T${time.value.time}${time.value.zone ?? 'Z'}`, start: date.start, end: time.end, raw: text.slice(date.start, time.end) };
  });
}

export function parseDateTime(text: string, options?: DateOptions): string | null {
  return first(findDateTimes(text, options));
}

/** Four-digit years between 1000 and 2999. */
export function findYears(text: string): Match<number>[] {
  return [...text.matchAll(/(?<![\d.,])(1\d{3}|2\d{3})(?![\d])/g)].map((m) => ({ value: Number(m[1]), start: m.index, end: m.index + m[0].length, raw: m[0] }));
}

// ---------------------------------------------------------------------------------------------
// Booleans

const TRUE_WORDS = new Set(['yes', 'y', 'true', 't', '1', 'on', 'checked', 'x', '[x]', '(x)', '✓', '✔', '☑', '☒', '✅', 'present', 'included', 'enabled', 'available', 'active', 'done', 'passed', 'pass', 'ok', 'required', 'ja', 'oui', 'sí', 'si']);
const FALSE_WORDS = new Set(['no', 'n', 'false', 'f', '0', 'off', 'unchecked', '[ ]', '( )', '☐', '✗', '✘', '❌', 'none', 'absent', 'excluded', 'disabled', 'unavailable', 'inactive', 'not', 'failed', 'fail', 'nein', 'non', 'never']);

/** "Yes"/"No", "true"/"false", "Y"/"N", "1"/"0", check marks and boxes; null when it says neither. */
export function parseBoolean(text: string): boolean | null {
  const s = text.trim().toLowerCase().replace(/[.!]+$/, '');
  if (s === '' || s === 'n/a' || s === 'na' || s === '-' || s === '?') return null;
  if (TRUE_WORDS.has(s)) return true;
  if (FALSE_WORDS.has(s)) return false;
  const word = s.match(/^[[(]?\s?([\p{L}\p{N}✓✔☑☒✅☐✗✘❌]+)\s?[\])]?/u)?.[1];
  if (word && TRUE_WORDS.has(word)) return true;
  if (word && FALSE_WORDS.has(word)) return false;
  return /^not\b/.test(s) ? false : null;
}

// ---------------------------------------------------------------------------------------------
// E-mail addresses and URLs

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
