// The offline extractor: schema-guided, no model. Each field is looked for under its labels
// (the property name, title, description words and synonyms; see labels.ts) in label-value
// pairs and table headers, and by the shape of its type (dates, e-mail addresses, URLs,
// amounts, DOIs) near words that name it; titles and person names have their own cues.
// Every value is parsed to the schema's type and checked against the property's schema.
// For `multiple`, table rows become records (columns matched to properties by header, or
// by position and type when the table has no header), else repeated label-value blocks.
// This module reads one record; offline/ holds the fields, the candidates, the cues and the
// table and block records.
import { buildLayout, type Layout } from './layout.js';
import { best, checkboxCandidates, enumCandidates, pairCandidates, typedCandidates } from './offline/candidates.js';
import { organisationCandidates, personCandidates, titleCandidates } from './offline/cues.js';
import { convert, fieldOf, type ExtractedRecord, type Field } from './offline/field.js';
import { blockRecords, tableRecords } from './offline/records.js';
import { describeSchema, fitsField, type FieldSpec } from './schema.js';

export type { ExtractedRecord };

export interface ExtractionInput {
  /** The document's text, one string per page. */
  pages: string[];
  /** A title known from the file or the document's metadata. */
  title?: string | null;
}

function extractField(layout: Layout, field: Field, context: string[]): unknown {
  const spec = field.spec;
  if (spec.type === 'object') {
    const record = extractFields(layout, spec.properties, [...context, spec.key]);
    return Object.keys(record).length > 0 && fitsField(spec, record) ? record : undefined;
  }
  if (spec.type === 'array' && spec.items?.type === 'object') {
    const records = tableRecords(layout, spec.items.properties).records;
    return records.length > 0 && fitsField(spec, records) ? records : undefined;
  }
  const candidates = [...pairCandidates(layout, field)];
  if (spec.type === 'boolean') candidates.push(...checkboxCandidates(layout, field));
  else if (spec.enum) candidates.push(...enumCandidates(layout, field));
  else candidates.push(...typedCandidates(layout, field));
  if (field.titleLike) candidates.push(...titleCandidates(layout).map((c) => ({ ...c, value: convert(String(c.value), field) })).filter((c) => c.value !== null));
  if (field.personLike) candidates.push(...personCandidates(layout, field));
  if (field.organisationLike) candidates.push(...organisationCandidates(layout, field));
  return best(candidates)?.value;
}

function extractFields(layout: Layout, specs: FieldSpec[], context: string[] = []): ExtractedRecord {
  const record: ExtractedRecord = {};
  for (const spec of specs) {
    const value = extractField(layout, fieldOf(spec, context), context);
    if (value !== undefined && value !== null) record[spec.key] = value;
  }
  return record;
}

/**
 * Extracts from a document's text with a (checked) extraction schema: one record, or with
 * `multiple` one per table row or repeated block found. Values not found are left out.
 */
export function extractOffline(schema: Record<string, unknown>, multiple: boolean, input: ExtractionInput): ExtractedRecord[] {
  const specs = describeSchema(schema);
  const layout = buildLayout(input.pages, input.title ?? null);
  if (!multiple) return [extractFields(layout, specs)];
  const fromTables = tableRecords(layout, specs);
  if (fromTables.records.length > 0) return fromTables.records;
  const fromBlocks = blockRecords(layout, specs);
  if (fromBlocks.length > 0) return fromBlocks;
  const single = extractFields(layout, specs);
  return Object.keys(single).length > 0 ? [single] : [];
}
