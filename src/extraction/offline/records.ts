// Records for `multiple` and for arrays of objects: table rows (columns matched to properties
// by header, or by position and type when no header names them; a table continued on later
// pages joins its first part), else repeated label-value blocks.
import { labelScore } from '../labels.js';
import type { Layout, Pair, Table } from '../layout.js';
import type { FieldSpec } from '../schema.js';
import { convert, fieldOf, type ExtractedRecord, type Field } from './field.js';

interface TableReading {
  records: ExtractedRecord[];
  score: number;
  header: string | null;
}

function mode(values: number[]): number {
  const counts = new Map<number, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0])[0]?.[0] ?? 0;
}

/** A header cell naming several properties ("Population (millions) Area (km2) Capital" from a PDF) split in their order. */
function splitHeader(header: string[], columns: number, fields: Field[]): string[] {
  if (header.length >= columns) return header;
  const out: string[] = [];
  for (const cell of header) {
    const tokens = cell.split(/\s+/).filter(Boolean);
    const starts: number[] = [];
    for (const field of fields) {
      const at = tokens.findIndex((t) => labelScore(t, field.vocab) >= 0.5);
      if (at >= 0 && !starts.includes(at)) starts.push(at);
    }
    starts.sort((a, b) => a - b);
    if (starts.length < 2) {
      out.push(cell);
      continue;
    }
    starts[0] = 0;
    starts.forEach((s, i) => out.push(tokens.slice(s, starts[i + 1]).join(' ')));
  }
  return out.length === columns ? out : header;
}

function fits(text: string, field: Field): boolean {
  return text.trim() !== '' && convert(text, field) !== null;
}

/** Columns for properties: by header labels; for a table without a matching header, by position among the columns whose values fit. */
function mapColumns(table: Table, fields: Field[]): { columns: Map<number, number>; headerRow: boolean; score: number } {
  const data = table.rows.slice(1);
  const columns = mode(data.map((r) => r.length));
  const header = splitHeader(table.rows[0], columns, fields);
  const scored: { f: number; c: number; s: number }[] = [];
  fields.forEach((field, f) => {
    header.forEach((cell, c) => {
      const s = labelScore(cell, field.vocab);
      if (s >= 0.4) scored.push({ f, c, s });
    });
  });
  scored.sort((a, b) => b.s - a.s || a.c - b.c);
  const map = new Map<number, number>();
  const used = new Set<number>();
  let score = 0;
  for (const { f, c, s } of scored) {
    if (map.has(f) || used.has(c)) continue;
    map.set(f, c);
    used.add(c);
    score += s;
  }
  if (map.size > 0) {
    if (header !== table.rows[0]) table.rows[0] = header;
    return { columns: map, headerRow: true, score };
  }
  // No header names a property: a first row of labels over differently filled rows is still
  // a header (skipped), and properties take the fitting columns in order.
  const first = table.rows[0];
  const filled = (row: string[]) => row.filter((c) => c !== '').length / Math.max(1, row.length);
  const dataFill = data.reduce((sum, r) => sum + filled(r), 0) / Math.max(1, data.length);
  const numeric = (row: string[]) => row.filter((c) => /^[-+(]?[$€£]?\d[\d.,]*%?\)?$/.test(c)).length;
  const headerRow =
    first.every((c) => !/^[-+(]?[$€£]?\d[\d.,]*%?\)?$/.test(c)) && (Math.abs(filled(first) - dataFill) > 0.4 || data.some((r) => numeric(r) > 0));
  const body = headerRow ? data : table.rows;
  // Columns by position only when the table has the schema's shape: as many columns as
  // scalar properties, or a schema of one property (a list's first fitting column).
  const scalars = fields.filter((field) => field.spec.type !== 'object' && !(field.spec.type === 'array' && field.spec.items?.type === 'object'));
  if (scalars.length !== 1 && scalars.length !== columns) return { columns: map, headerRow, score };
  let next = 0;
  fields.forEach((field, f) => {
    if (field.spec.type === 'object' || (field.spec.type === 'array' && field.spec.items?.type === 'object')) return;
    for (let c = next; c < columns; c++) {
      const values = body.map((r) => r[c] ?? '').filter((v) => v !== '');
      if (values.length === 0) continue;
      if (values.filter((v) => fits(v, field)).length / values.length >= 0.6) {
        map.set(f, c);
        next = c + 1;
        score += 0.3;
        return;
      }
    }
  });
  return { columns: map, headerRow, score };
}

function readTable(table: Table, fields: Field[]): TableReading {
  const { columns, headerRow, score } = mapColumns(table, fields);
  if (columns.size === 0) return { records: [], score: 0, header: null };
  const header = headerRow ? table.rows[0].join('\u0001') : null;
  const body = headerRow ? table.rows.slice(1) : table.rows;
  const records: ExtractedRecord[] = [];
  for (const row of body) {
    if (header !== null && row.join('\u0001') === header) continue;
    const record: ExtractedRecord = {};
    for (const [f, c] of columns) {
      const cell = row[c];
      if (cell === undefined || cell.trim() === '') continue;
      const value = convert(cell, fields[f]);
      if (value !== null) record[fields[f].spec.key] = value;
    }
    if (Object.keys(record).length === 0) continue;
    if (fields.some((f) => f.spec.required && record[f.spec.key] === undefined)) continue;
    records.push(record);
  }
  const completeness = records.length / Math.max(1, body.length);
  return { records, score: score * (0.5 + completeness) + 0.01 * records.length, header };
}

export function tableRecords(layout: Layout, specs: FieldSpec[]): TableReading {
  const fields = specs.map((s) => fieldOf(s));
  const readings = layout.tables.map((t) => readTable({ ...t, rows: t.rows.map((r) => [...r]) }, fields));
  let top: TableReading | null = null;
  for (const r of readings) if (r.records.length > 0 && (!top || r.score > top.score)) top = r;
  if (!top) return { records: [], score: 0, header: null };
  // A table continued on later pages repeats its header: those rows are records too.
  if (top.header !== null) {
    const records = readings.filter((r) => r.header === top!.header).flatMap((r) => r.records);
    return { ...top, records };
  }
  return top;
}

/** Records from repeated label-value blocks ("Name: A / Age: 3", "Name: B / Age: 4"). */
export function blockRecords(layout: Layout, specs: FieldSpec[]): ExtractedRecord[] {
  const fields = specs.filter((s) => s.type !== 'object' && !(s.type === 'array' && s.items?.type === 'object')).map((s) => fieldOf(s));
  const records: ExtractedRecord[] = [];
  let current: ExtractedRecord = {};
  const pairs: Pair[] = layout.pairs.filter((p) => p.source !== 'citation');
  for (const pair of pairs) {
    let top: { field: Field; score: number } | null = null;
    for (const field of fields) {
      const score = labelScore(pair.label, field.vocab);
      if (score >= 0.5 && (!top || score > top.score)) top = { field, score };
    }
    if (!top) continue;
    const value = convert(pair.value, top.field);
    if (value === null) continue;
    if (current[top.field.spec.key] !== undefined) {
      records.push(current);
      current = {};
    }
    current[top.field.spec.key] = value;
  }
  records.push(current);
  const enough = Math.min(2, fields.length);
  const complete = records.filter((r) => Object.keys(r).length >= enough && specs.every((s) => !s.required || r[s.key] !== undefined));
  return complete.length >= 2 ? complete : [];
}
