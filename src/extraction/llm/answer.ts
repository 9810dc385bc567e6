// Reading the model's answer: values written in words turned into the schema's types, each
// checked against its property's schema, and for `multiple` the records list and its count.
import { valueKind } from '../labels.js';
import type { ExtractedRecord } from '../offline.js';
import { fitsField, type FieldSpec } from '../schema.js';
import { parseBoolean, parseDate, parseDateTime, parseEmail, parseInteger, parseMoney, parseNumber, parseTime, parseUrl } from '../values.js';

/** A value the model wrote in words ("$1,234", "25 Feb 2009", "yes") turned into the schema's type; undefined = drop. */
export function normaliseValue(spec: FieldSpec, value: unknown): unknown {
  if (value === null || value === undefined) return undefined;
  if (spec.type === 'object') {
    if (typeof value !== 'object' || Array.isArray(value)) return undefined;
    const out = normaliseRecord(spec.properties, value as Record<string, unknown>);
    return Object.keys(out).length > 0 ? out : undefined;
  }
  if (spec.type === 'array') {
    const items = Array.isArray(value) ? value : [value];
    const out = items.map((v) => (spec.items ? normaliseValue(spec.items, v) : v)).filter((v) => v !== undefined);
    return out;
  }
  if (typeof value === 'string') {
    const text = value.trim();
    if (text === '' || /^(?:null|none|n\/a|unknown|not (?:stated|given|found|available))$/i.test(text)) return undefined;
    switch (spec.type) {
      case 'number':
        return (valueKind(spec) === 'money' ? parseMoney(text) : parseNumber(text)) ?? value;
      case 'integer':
        return parseInteger(text) ?? value;
      case 'boolean':
        return parseBoolean(text) ?? value;
      case 'string':
        switch (spec.format) {
          case 'date':
            return parseDate(text) ?? text;
          case 'date-time':
            return parseDateTime(text) ?? text;
          case 'time':
            return parseTime(text) ?? text;
          case 'email':
            return parseEmail(text) ?? text;
          case 'uri':
            return parseUrl(text, { bareDomains: true }) ?? text;
        }
        if (spec.enum) return spec.enum.find((o) => typeof o === 'string' && o.toLowerCase() === text.toLowerCase()) ?? text;
        return text;
    }
  }
  if (spec.type === 'string' && (typeof value === 'number' || typeof value === 'boolean')) return String(value);
  if (spec.type === 'integer' && typeof value === 'number' && Number.isInteger(value)) return value;
  return value;
}

export function normaliseRecord(specs: FieldSpec[], record: Record<string, unknown>): ExtractedRecord {
  const out: ExtractedRecord = {};
  for (const spec of specs) {
    const value = normaliseValue(spec, record[spec.key]);
    if (value !== undefined && !(Array.isArray(value) && value.length === 0 && !spec.required)) out[spec.key] = value;
  }
  return out;
}

/** Problems of the values of one record (each checked against its property's schema; required fields are checked after merging). */
function valueProblems(specs: FieldSpec[], record: ExtractedRecord, where: string): string[] {
  const problems: string[] = [];
  for (const spec of specs) {
    const value = record[spec.key];
    if (value === undefined) continue;
    if (!fitsField(spec, value)) problems.push(`${where}"${spec.key}" = ${JSON.stringify(value).slice(0, 80)} does not fit its schema ${JSON.stringify(spec.schema).slice(0, 160)}`);
  }
  return problems;
}

export function readAnswer(specs: FieldSpec[], multiple: boolean, json: unknown): { records: ExtractedRecord[]; problems: string[]; countMismatch: string | null } {
  const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isObject(json)) return { records: [], problems: ['the answer is not a JSON object'], countMismatch: null };
  if (!multiple) {
    const record = normaliseRecord(specs, json);
    return { records: [record], problems: valueProblems(specs, record, ''), countMismatch: null };
  }
  if (!Array.isArray(json.records)) return { records: [], problems: ['the answer has no "records" list'], countMismatch: null };
  const problems: string[] = [];
  const records: ExtractedRecord[] = [];
  json.records.forEach((raw, i) => {
    if (!isObject(raw)) {
      problems.push(`records[${i}] is not an object`);
      return;
    }
    const record = normaliseRecord(specs, raw);
    problems.push(...valueProblems(specs, record, `records[${i}].`));
    if (Object.keys(record).length > 0) records.push(record);
  });
  const count = json.record_count;
  const countMismatch = typeof count === 'number' && count !== json.records.length ? `record_count is ${count} but "records" lists ${json.records.length}; list every record you counted` : null;
  return { records, problems, countMismatch };
}
