// Numbers as written in documents (digit groups in English and European styles, accounting
// parentheses, exponents, scale words), amounts of money with their currency, and percentages.
import { first, type Match } from './match.js';

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
