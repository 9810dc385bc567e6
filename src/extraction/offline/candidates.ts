// The candidates for one scalar field, each with a score: label-value pairs under its labels,
// values of its type near words that name it, enum options and check boxes; the best one wins.
import { labelScore, type ValueKind } from '../labels.js';
import { isHeadingLabel, segments, type Layout, type Line, type PairSource } from '../layout.js';
import { fitsField } from '../schema.js';
import {
  findDates,
  findDateTimes,
  findDois,
  findEmails,
  findMoney,
  findPercents,
  findPhones,
  findTimes,
  findUrls,
  findYears,
  type Match,
} from '../values.js';
import { isPersonName, personList } from './cues.js';
import { convert, matchEnum, MIN_SCORE, type Candidate, type Field } from './field.js';

const SOURCE_WEIGHT: Record<PairSource, number> = { colon: 1, table: 0.95, citation: 0.9, prefix: 0.85, heading: 0.8 };

export function pairCandidates(layout: Layout, field: Field): Candidate[] {
  const out: Candidate[] = [];
  const total = Math.max(1, layout.lines.length);
  for (const pair of layout.pairs) {
    const label = labelScore(pair.label, field.vocab);
    if (label < MIN_SCORE) continue;
    let weight = SOURCE_WEIGHT[pair.source];
    let text = pair.value;
    if (field.longText && pair.long) text = pair.long;
    // A heading's next line is its value only for short values; running text is not a name.
    if (field.personLike && !isPersonName(pair.value) && !personList(pair.value)) weight *= pair.source === 'heading' ? 0.5 : 0.7;
    const value = convert(text, field);
    if (value === null) continue;
    // Document-level facts sit near the start: later pairs lose a little.
    out.push({ value, score: label * weight * (1 - 0.1 * (pair.line.index / total)), at: pair.line.index });
  }
  return out;
}

function typedMatches(text: string, kind: ValueKind): Match<unknown>[] {
  switch (kind) {
    case 'email':
      return findEmails(text);
    case 'url':
      return findUrls(text);
    case 'date':
      return findDates(text);
    case 'datetime':
      return findDateTimes(text);
    case 'time':
      return findTimes(text).map((m) => ({ ...m, value: m.value.time }));
    case 'doi':
      return findDois(text);
    case 'phone':
      return findPhones(text);
    case 'money':
      return findMoney(text)
        .filter((m) => m.value.currency !== null)
        .map((m) => ({ ...m, value: m.value.amount }));
    case 'percent':
      return findPercents(text);
    case 'year':
      return findYears(text);
    default:
      return [];
  }
}

/** How well the words around a match name the field: its segment's label, nearby words, headings above. */
function contextScore(layout: Layout, line: Line, start: number, field: Field): number {
  const before = line.text.slice(0, start);
  const segment = segments(before).pop() ?? '';
  const tokens = segment.replace(/[:：]\s*$/, '').split(/\s+/).filter(Boolean);
  let best = 0;
  const consider = (label: string, weight: number) => {
    if (label.trim() !== '') best = Math.max(best, labelScore(label, field.vocab) * weight);
  };
  consider(segment.replace(/[:：]\s*$/, ''), 1);
  consider(tokens.slice(0, 4).join(' '), 0.9);
  consider(tokens.slice(-4).join(' '), 0.9);
  // Headings up to eight lines above on the same page ("Correspondence" over an address).
  let distance = 0;
  for (let i = line.index - 1; i >= 0 && distance < 8; i--) {
    const above = layout.lines[i];
    if (above.page !== line.page) break;
    if (above.text.trim() === '') continue;
    distance++;
    if (isHeadingLabel(above.text)) consider(above.text.trim(), 0.9 ** distance);
  }
  return best;
}

export function typedCandidates(layout: Layout, field: Field): Candidate[] {
  const out: Candidate[] = [];
  const total = Math.max(1, layout.lines.length);
  // With a name that only says the kind ("email"), any value of the kind will do; with a
  // distinctive one ("received_date"), the words around must name it.
  // (words from the description are weaker evidence than the name: the bar is lower).
  const distinctive = field.vocab.concepts.filter((c) => !field.vocab.kindWords.has(c.stem));
  const base = distinctive.length === 0 ? 0.4 : distinctive.every((c) => c.fromDescription) ? 0.3 : 0.15;
  for (const line of layout.lines) {
    if (line.text.trim() === '') continue;
    for (const match of typedMatches(line.text, field.kind)) {
      const value = field.spec.type === 'array' ? [match.value] : match.value;
      if (!fitsField(field.spec, value)) continue;
      const context = contextScore(layout, line, match.start, field);
      out.push({ value, score: base + 0.55 * context + 0.05 * (1 - line.index / total), at: line.index });
    }
  }
  return out;
}

export function enumCandidates(layout: Layout, field: Field): Candidate[] {
  const options = field.spec.enum?.filter((o): o is string => typeof o === 'string') ?? [];
  if (options.length === 0) return [];
  const out: Candidate[] = [];
  for (const line of layout.lines) {
    const value = matchEnum(line.text, options);
    if (value === undefined) continue;
    const at = line.text.toLowerCase().indexOf(String(value).toLowerCase());
    out.push({ value, score: 0.2 + 0.55 * contextScore(layout, line, Math.max(0, at), field), at: line.index });
  }
  return out;
}

/** Check boxes next to the label: "☑ Member", "[x] Paid". */
export function checkboxCandidates(layout: Layout, field: Field): Candidate[] {
  const out: Candidate[] = [];
  for (const line of layout.lines) {
    const m = /^\s*(?<box>\[[ xX✓]\]|[☐☑☒✓✔])\s*(?<label>.+)$/u.exec(line.text);
    if (!m?.groups) continue;
    const score = labelScore(m.groups.label, field.vocab);
    if (score < MIN_SCORE) continue;
    out.push({ value: /[xX✓✔☑☒]/u.test(m.groups.box), score, at: line.index });
  }
  return out;
}

export function best(candidates: Candidate[]): Candidate | null {
  let top: Candidate | null = null;
  for (const c of candidates) {
    if (c.score < MIN_SCORE) continue;
    if (!top || c.score > top.score + 1e-9 || (Math.abs(c.score - top.score) <= 1e-9 && c.at < top.at)) top = c;
  }
  return top;
}
