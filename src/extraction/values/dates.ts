// Calendar dates in ISO form from the ways documents write them (month names in several
// languages, numeric orders), times of day, date-times in RFC 3339, and years.
import { first, type Match } from './match.js';

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
