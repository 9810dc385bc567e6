// Cues for titles, people and organisations: how much a line looks like a document title, a
// person's name or a list of them, or a company, and the candidates these cues propose.
import { segments, type Layout, type Line } from '../layout.js';
import { convert, stripMarkers, type Candidate, type Field } from './field.js';

const NAME_PARTICLES = new Set(['de', 'van', 'von', 'der', 'den', 'da', 'di', 'du', 'le', 'la', 'bin', 'al', 'del', 'dos', 'ter']);
const NOT_NAMES = new Set(
  'university school department institute faculty college abstract introduction table figure contents chapter section article original journal review company corporation inc ltd llc gmbh the and of for in on with to a an from by monday tuesday wednesday thursday friday saturday sunday street road avenue press edition page pages volume issue vol no received accepted published keywords key words doi email e-mail phone tel fax www http https summary conclusion references appendix draft internet standard status memo copyright notice document documents lorem ipsum'.split(
    ' ',
  ),
);
const MONTH_WORDS = new Set('january february march april may june july august september october november december'.split(' '));

/** "Satoshi Nakamoto", "Özcan SAYGIN", "Michiel B. de Jong": two to five capitalised name words. */
export function isPersonName(text: string): boolean {
  const tokens = stripMarkers(text).replace(/,$/, '').split(/\s+/).filter(Boolean);
  if (tokens.length < 2 || tokens.length > 5) return false;
  let capitalised = 0;
  for (const token of tokens) {
    const lower = token.toLowerCase();
    if (NOT_NAMES.has(lower) || MONTH_WORDS.has(lower)) return false;
    if (NAME_PARTICLES.has(token)) continue;
    if (/^\p{Lu}\.(\p{Lu}\.)*$/u.test(token)) continue;
    if (/^\p{Lu}[\p{Ll}'’-]+(?:-\p{Lu}[\p{Ll}'’]+)?$/u.test(token) || /^\p{Lu}{2,}$/u.test(token)) {
      capitalised++;
      continue;
    }
    return false;
  }
  return capitalised >= 2;
}

/** A line listing several people: "Andreas Gal, Brendan Eich, Mike Shaver". */
export function personList(text: string): string[] | null {
  const parts = text
    .split(/\s*,\s*|\s+and\s+|\s*;\s*/)
    .map((p) => stripMarkers(p))
    .filter((p) => p !== '');
  return parts.length >= 2 && parts.every(isPersonName) ? parts : null;
}

const FUNCTION_WORDS = /\b(?:of|for|on|in|and|the|a|an|with|to|from|via|using|as|at|by|into|towards?)\b/;
const AFFILIATION = /\b(?:University|Universit[äéà]t?|Institute|School|Department|Faculty|College|Corporation|Laboratory|Laboratories|Inc\.?|Ltd\.?|GmbH|Hospital|Center|Centre)\b/;

/** How much a line (or a few joined lines) looks like a document title, 0..1. */
function titleLikeness(text: string): number {
  const tokens = text.split(/\s+/).filter(Boolean);
  const n = tokens.length;
  if (n === 0 || text.length > 250) return 0;
  if (/@|https?:\/\/|www\./i.test(text)) return 0.05;
  let score = 0.45;
  if (n >= 6 && n <= 25) score += 0.25;
  else if (n >= 3) score += 0.1;
  else score -= 0.2;
  const capitalised = tokens.filter((t) => /^\p{Lu}/u.test(t)).length / n;
  if (FUNCTION_WORDS.test(text) || capitalised >= 0.6) score += 0.15;
  if (isPersonName(text) || personList(text)) score -= 0.45;
  if (AFFILIATION.test(text)) score -= 0.35;
  const digits = (text.match(/\d/g) ?? []).length;
  if (digits / text.length > 0.15) score -= 0.35;
  // Abbreviations only ("Turk J Med Sci"), or one shouted label ("ORIGINAL ARTICLE").
  if (tokens.every((t) => t.replace(/\W/g, '').length <= 4)) score -= 0.3;
  if (/^[\p{Lu}\s\W]+$/u.test(text) && n <= 3) score -= 0.25;
  // A sentence of running text (dialogue too), or a label with its value.
  const bare = text.replace(/["'”’»)\]]+$/u, '');
  if (/[.!?]$/.test(bare) && n > 8) score -= 0.4;
  else if (/\p{Ll}{2}\.$/u.test(bare) && n >= 4) score -= 0.45;
  if (/^["“'‘].*["”'’]$/u.test(text)) score -= 0.4;
  if (((text.match(/,/g) ?? []).length >= 2 || /["“”]/.test(text) || /[?!]\s/.test(text)) && n > 6) score -= 0.3;
  if (/^[^:]{1,30}:\s*\d/.test(text)) score -= 0.4;
  if (/^(?:abstract|contents|introduction|table of contents|summary|key ?words?|results?|methods?|materials|aims?|objectives?|purpose|background|conclusions?|discussion|references)\b/i.test(text)) score -= 0.5;
  return Math.max(0, Math.min(1, score));
}

export function titleCandidates(layout: Layout): Candidate[] {
  const out: Candidate[] = [];
  if (layout.title) out.push({ value: layout.title, score: 0.85, at: -1 });
  const firstPage = layout.lines.find((l) => l.text.trim() !== '')?.page ?? 0;
  const lines = layout.lines.filter((l) => l.page === firstPage && l.text.trim() !== '').slice(0, 40);
  // Runs of consecutive lines of one block (at most three, short), plus a following block
  // that starts in lower case (a title broken over a gap by the PDF layout).
  const blockSize = new Map<number, number>();
  const blockWidth = new Map<number, number>();
  for (const line of lines) {
    blockSize.set(line.block, (blockSize.get(line.block) ?? 0) + 1);
    blockWidth.set(line.block, Math.max(blockWidth.get(line.block) ?? 0, line.text.trim().length));
  }
  for (let i = 0; i < lines.length; i++) {
    let text = lines[i].text.trim();
    // Titles start a block of a few short lines, with a capital or a digit.
    if (text.length > 160 || tableLine(lines[i]) || !/^[\p{Lu}\p{N}"“'‘]/u.test(text) || (blockSize.get(lines[i].block) ?? 0) > 3 || (blockWidth.get(lines[i].block) ?? 0) > 110) continue;
    if (i > 0 && lines[i - 1].block === lines[i].block && !/[.:]$/.test(lines[i - 1].text.trim())) continue;
    const pieces = [text];
    for (let j = i + 1; j < lines.length && pieces.length < 3; j++) {
      const next = lines[j].text.trim();
      const sameBlock = lines[j].block === lines[j - 1].block;
      const continuation = /^\p{Ll}/u.test(next) && next.length < 120 && lines[j].block - lines[j - 1].block <= 1;
      if ((!sameBlock && !continuation) || next.length > 160 || isPersonName(next) || personList(next)) break;
      if (!continuation && !/\p{Ll}\s*$|[-–:,]$/u.test(pieces[pieces.length - 1])) break;
      pieces.push(next);
    }
    // The whole run is the candidate: a line that only starts a title (or a sentence) is none.
    text = pieces.join(' ');
    const likeness = titleLikeness(text);
    if (likeness > 0.3) out.push({ value: text, score: 0.8 * likeness * Math.max(0.6, 1 - 0.01 * i), at: lines[i].index });
  }
  return out;
}

const COMPANY = /\b(?:Ltd|Limited|Inc|Incorporated|LLC|LLP|GmbH|AG|SA|S\.A|SAS|SRL|BV|NV|Oy|AB|plc|PLC|Corp|Corporation|Co|Company|Group|Holdings)\b\.?/;

/** Lines near the top that name a company ("ACME Supplies Ltd."). */
export function organisationCandidates(layout: Layout, field: Field): Candidate[] {
  const out: Candidate[] = [];
  const lines = layout.lines.filter((l) => l.text.trim() !== '').slice(0, 15);
  lines.forEach((line, rank) => {
    for (const segment of segments(line.text)) {
      if (!COMPANY.test(segment) || segment.split(/\s+/).length > 8 || /[:@]/.test(segment)) continue;
      const value = convert(segment, field);
      if (value !== null) out.push({ value, score: 0.45 * Math.max(0.6, 1 - 0.03 * rank), at: line.index });
    }
  });
  return out;
}

function tableLine(line: Line): boolean {
  return /\t| \| /.test(line.text);
}

export function personCandidates(layout: Layout, field: Field): Candidate[] {
  const out: Candidate[] = [];
  const firstPage = layout.lines.find((l) => l.text.trim() !== '')?.page ?? 0;
  const lines = layout.lines.filter((l) => l.page === firstPage && l.text.trim() !== '').slice(0, 30);
  lines.forEach((line, rank) => {
    for (const segment of segments(line.text)) {
      let list = personList(segment);
      if (list) {
        // An author list wrapped over lines of one block: "A, B,\nC, D".
        for (let j = rank + 1; j < lines.length && lines[j].block === line.block; j++) {
          const more = personList(lines[j].text) ?? (isPersonName(lines[j].text) ? [stripMarkers(lines[j].text)] : null);
          if (!more) break;
          list = [...list, ...more];
        }
      }
      const text = list ? list.join(', ') : isPersonName(segment) ? stripMarkers(segment) : null;
      if (!text) continue;
      const value = convert(text, field);
      if (value !== null) out.push({ value, score: 0.5 * Math.max(0.5, 1 - 0.02 * rank), at: line.index });
    }
  });
  return out;
}
