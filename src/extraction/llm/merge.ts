// Merging the parts' answers: one record by vote per field, or the records of consecutive
// parts as one list, with the overlap's repeats dropped and a record cut by a boundary joined.
import type { ExtractedRecord } from '../offline.js';
import type { FieldSpec } from '../schema.js';

/** JSON with sorted keys, for comparing values. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** One record from the parts' answers: per field the value most parts gave (the earliest on a tie); lists united; objects field by field. */
export function mergeSingle(specs: FieldSpec[], records: ExtractedRecord[]): ExtractedRecord {
  const out: ExtractedRecord = {};
  for (const spec of specs) {
    const values = records.map((r) => r[spec.key]).filter((v) => v !== undefined);
    if (values.length === 0) continue;
    if (spec.type === 'object') {
      out[spec.key] = mergeSingle(spec.properties, values as ExtractedRecord[]);
    } else if (spec.type === 'array') {
      const seen = new Set<string>();
      const united: unknown[] = [];
      for (const list of values as unknown[][]) {
        for (const item of list) {
          const key = canonical(item);
          if (!seen.has(key)) {
            seen.add(key);
            united.push(item);
          }
        }
      }
      out[spec.key] = united;
    } else {
      const votes = new Map<string, { value: unknown; count: number; first: number }>();
      values.forEach((value, i) => {
        const key = canonical(value);
        const vote = votes.get(key) ?? { value, count: 0, first: i };
        vote.count++;
        votes.set(key, vote);
      });
      out[spec.key] = [...votes.values()].sort((a, b) => b.count - a.count || a.first - b.first)[0].value;
    }
  }
  return out;
}

function compatible(a: ExtractedRecord, b: ExtractedRecord): boolean {
  let shared = 0;
  for (const key of Object.keys(a)) {
    if (b[key] === undefined) continue;
    if (canonical(a[key]) !== canonical(b[key])) return false;
    shared++;
  }
  return shared > 0;
}

/**
 * Records of consecutive parts as one list: a record of a part that repeats one of the
 * previous part (the overlap) is dropped once per repetition, and the last record of a part
 * and the first of the next are joined when they agree on every field both have (a record
 * cut by the boundary).
 */
export function mergeRecords(parts: ExtractedRecord[][]): ExtractedRecord[] {
  const out: ExtractedRecord[] = [];
  let previous: ExtractedRecord[] = [];
  for (const records of parts) {
    const remaining = [...records];
    const pool = new Map<string, number>();
    for (const r of previous) pool.set(canonical(r), (pool.get(canonical(r)) ?? 0) + 1);
    for (let i = 0; i < remaining.length; ) {
      const key = canonical(remaining[i]);
      const left = pool.get(key) ?? 0;
      if (left > 0) {
        pool.set(key, left - 1);
        remaining.splice(i, 1);
      } else {
        i++;
      }
    }
    const last = out[out.length - 1];
    if (last && remaining.length > 0 && previous.length > 0 && compatible(last, remaining[0])) {
      const lastKeys = Object.keys(last).length;
      const firstKeys = Object.keys(remaining[0]).length;
      // Only a partial record is joined: two complete equal-looking records stay two.
      if (lastKeys !== firstKeys || lastKeys < Object.keys({ ...last, ...remaining[0] }).length) {
        out[out.length - 1] = { ...last, ...remaining[0] };
        remaining.shift();
      }
    }
    out.push(...remaining);
    previous = records;
  }
  return out;
}
