// The workspace's metadata catalogue: its top-level metadata fields, the JSON types each
// holds, and each field's most frequent scalar values (array elements included), computed
// in SQL over documents.metadata (store/catalogue.ts). It feeds query and metadata optimisation. Kept current:
// a cheap fingerprint of the workspace's documents (count, newest id, latest update) is read
// on every use, and the catalogue is recomputed whenever it changed.
import type { Kysely } from 'kysely';
import { metadataFingerprint, metadataStatistics } from '../store/catalogue.js';
import type { Database } from '../store/schema.js';

export type CatalogueScalar = string | number | boolean;

export interface CatalogueValue {
  value: CatalogueScalar;
  /** Documents (array elements: occurrences) holding the value. */
  count: number;
  /** Seen as an element of an array rather than as the field's own value. */
  inArray: boolean;
}

export interface CatalogueField {
  name: string;
  /** Documents holding the field, by JSON type (string, number, boolean, array, object, null). */
  types: Record<string, number>;
  documents: number;
  /** Most frequent first. */
  values: CatalogueValue[];
}

export interface Catalogue {
  /** Documents the catalogue was computed over (the newest ones when there are more than the sample). */
  documents: number;
  fields: CatalogueField[];
}

export interface CatalogueOptions {
  /** Newest documents read (LIMIT); older ones beyond it are not catalogued. */
  sampleDocuments?: number;
  maxFields?: number;
  valuesPerField?: number;
  /** Longer string values are not catalogued (they are text, not labels). */
  maxValueLength?: number;
  /** Workspaces kept in memory. */
  maxWorkspaces?: number;
}

interface Entry {
  fingerprint: string;
  catalogue: Catalogue;
}

export class MetadataCatalogue {
  private readonly cache = new Map<number, Entry>();
  private readonly sample: number;
  private readonly maxFields: number;
  private readonly valuesPerField: number;
  private readonly maxValueLength: number;
  private readonly maxWorkspaces: number;

  constructor(
    private readonly db: Kysely<Database>,
    options: CatalogueOptions = {},
  ) {
    this.sample = options.sampleDocuments ?? 20_000;
    this.maxFields = options.maxFields ?? 100;
    this.valuesPerField = options.valuesPerField ?? 50;
    this.maxValueLength = options.maxValueLength ?? 200;
    this.maxWorkspaces = options.maxWorkspaces ?? 500;
  }

  async get(workspaceId: number): Promise<Catalogue> {
    const fingerprint = await metadataFingerprint(this.db, workspaceId);
    const cached = this.cache.get(workspaceId);
    if (cached && cached.fingerprint === fingerprint) return cached.catalogue;
    const catalogue = await this.compute(workspaceId);
    this.cache.delete(workspaceId);
    this.cache.set(workspaceId, { fingerprint, catalogue });
    if (this.cache.size > this.maxWorkspaces) this.cache.delete(this.cache.keys().next().value!);
    return catalogue;
  }

  private async compute(workspaceId: number): Promise<Catalogue> {
    const stats = await metadataStatistics(this.db, workspaceId, {
      sample: this.sample,
      valuesPerField: this.valuesPerField,
      maxValueLength: this.maxValueLength,
    });
    const fields = new Map<string, CatalogueField>();
    for (const row of stats.types) {
      const field = fields.get(row.key) ?? { name: row.key, types: {}, documents: 0, values: [] };
      field.types[row.type] = row.n;
      field.documents += row.n;
      fields.set(row.key, field);
    }
    for (const row of stats.values) {
      fields.get(row.key)?.values.push({ value: row.value, count: row.n, inArray: row.inArray });
    }
    const ordered = Array.from(fields.values())
      .sort((a, b) => b.documents - a.documents || (a.name < b.name ? -1 : 1))
      .slice(0, this.maxFields);
    return { documents: stats.documents, fields: ordered };
  }
}
