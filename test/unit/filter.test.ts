// The metadata and date filter compilers, run against real documents on both engines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { AppError } from '../../src/errors.js';
import { compileDateFilter, compileMetadataFilter } from '../../src/store/filter.js';
import { ENGINES, openTestStore, type TestStore } from '../helpers/stores.js';

const DOCS: Record<string, { metadata: Record<string, unknown>; created_at: string }> = {
  a: {
    created_at: '2024-01-10T12:00:00Z',
    metadata: {
      title: 'Alpha report',
      price: 10,
      category: 'books',
      tags: ['x', 'y'],
      address: { city: 'Paris', zip: '75001' },
      published: '2024-03-01',
      active: true,
      rating: 4.5,
      items: [{ k: 1 }, { k: 2 }],
    },
  },
  b: {
    created_at: '2024-02-10T12:00:00Z',
    metadata: {
      title: 'Beta',
      price: 25,
      category: 'books',
      tags: ['y', 'z'],
      address: { city: 'Berlin' },
      published: '2023-12-31',
      active: false,
      note: null,
    },
  },
  c: {
    created_at: '2024-03-10T12:00:00.250Z',
    metadata: {
      title: 'gamma notes',
      price: '25',
      category: 'music',
      tags: [],
      address: { city: 'paris' },
      active: true,
    },
  },
  d: {
    created_at: '2024-04-10T12:00:00Z',
    metadata: {
      price: 100.0,
      tags: 'x,y',
      nested: { deep: { v: 1 } },
      items: [{ k: 1, extra: true }],
      blob: {},
      'we"ird\\,{key} ': 'odd',
      NULL: 'n',
    },
  },
  e: { created_at: '2024-05-10T12:00:00Z', metadata: {} },
};

const meta = (filter: unknown) => compileMetadataFilter(filter, sql.ref('d.metadata'));
const dates = (filter: unknown) => compileDateFilter(filter, sql.ref('d.created_at'), 'created_at_filter');

function expectFilterError(run: () => unknown, path: string): void {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('INVALID_FILTER');
    expect((error as AppError).status).toBe(400);
    expect((error as AppError).message.startsWith(`${path}:`)).toBe(true);
    return;
  }
  throw new Error(`expected INVALID_FILTER at ${path}`);
}

describe.each(ENGINES)('metadata filters on %s', (engine) => {
  let store: TestStore;
  const names = new Map<number, string>();

  beforeAll(async () => {
    store = await openTestStore(engine);
    const ws = await store.db
      .insertInto('workspaces')
      .values({ name: 'w' })
      .returning('id')
      .executeTakeFirstOrThrow();
    for (const [name, doc] of Object.entries(DOCS)) {
      const row = await store.db
        .insertInto('documents')
        .values({
          workspace_id: ws.id,
          file_path: name,
          metadata: JSON.stringify(doc.metadata),
          source: 'test',
          created_at: doc.created_at,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      names.set(row.id, name);
    }
  });

  afterAll(async () => {
    await store?.close();
  });

  async function match(filter: unknown): Promise<string[]> {
    const rows = await store.db
      .selectFrom('documents as d')
      .select('d.id')
      .where(meta(filter))
      .execute();
    return rows.map((r) => names.get(r.id)!).sort();
  }

  async function matchDates(filter: unknown): Promise<string[]> {
    const rows = await store.db
      .selectFrom('documents as d')
      .select('d.id')
      .where(dates(filter))
      .execute();
    return rows.map((r) => names.get(r.id)!).sort();
  }

  it('matches everything for an empty filter', async () => {
    for (const f of [null, undefined, {}]) expect(await match(f)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('compares plain values and $eq by deep equality, $ne including missing fields', async () => {
    expect(await match({ category: 'books' })).toEqual(['a', 'b']);
    expect(await match({ category: 'books', price: 25 })).toEqual(['b']);
    expect(await match({ price: 100 })).toEqual(['d']); // 100.0 equals 100
    expect(await match({ price: '25' })).toEqual(['c']);
    expect(await match({ tags: ['x', 'y'] })).toEqual(['a']);
    expect(await match({ tags: ['y', 'x'] })).toEqual([]);
    expect(await match({ address: { $eq: { zip: '75001', city: 'Paris' } } })).toEqual(['a']);
    expect(await match({ blob: {} })).toEqual(['d']);
    expect(await match({ note: null })).toEqual(['b']);
    expect(await match({ active: { $eq: true } })).toEqual(['a', 'c']);
    expect(await match({ category: { $ne: 'books' } })).toEqual(['c', 'd', 'e']);
    expect(await match({ price: { $ne: 25 } })).toEqual(['a', 'c', 'd', 'e']);
  });

  it('compares numbers as numbers, strings byte-wise, and never across kinds', async () => {
    expect(await match({ price: { $gt: 20 } })).toEqual(['b', 'd']);
    expect(await match({ price: { $gte: 25, $lt: 100 } })).toEqual(['b']);
    expect(await match({ price: { $lte: 10 } })).toEqual(['a']);
    expect(await match({ price: { $gt: '20' } })).toEqual(['c']);
    expect(await match({ rating: { $gt: 4.25 } })).toEqual(['a']);
    expect(await match({ published: { $gte: '2024-01-01' } })).toEqual(['a']);
    expect(await match({ published: { $lt: '2024-01-01' } })).toEqual(['b']);
    // Byte order: lower case sorts after every capital letter.
    expect(await match({ title: { $gt: 'Z' } })).toEqual(['c']);
    expect(await match({ title: { $lt: 'B' } })).toEqual(['a']);
    expect(await match({ active: { $gt: 0 } })).toEqual([]);
    expect(await match({ tags: { $gt: 'a' } })).toEqual(['d']);
  });

  it('handles $in and $nin', async () => {
    expect(await match({ category: { $in: ['music', 'film'] } })).toEqual(['c']);
    expect(await match({ price: { $in: [10, '25'] } })).toEqual(['a', 'c']);
    expect(await match({ price: { $in: [] } })).toEqual([]);
    expect(await match({ tags: { $in: [['y', 'z']] } })).toEqual(['b']);
    expect(await match({ category: { $nin: ['books'] } })).toEqual(['c', 'd', 'e']);
    expect(await match({ price: { $nin: [] } })).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('handles the array operators', async () => {
    expect(await match({ tags: { $contains: ['y'] } })).toEqual(['a', 'b']);
    expect(await match({ tags: { $contains: ['x', 'y'] } })).toEqual(['a']);
    expect(await match({ tags: { $contains: 'z' } })).toEqual(['b']);
    expect(await match({ tags: { $contains: [] } })).toEqual(['a', 'b', 'c']);
    // On a string field a string value is a substring test.
    expect(await match({ tags: { $contains: 'x,' } })).toEqual(['d']);
    expect(await match({ title: { $contains: 'eta' } })).toEqual(['b']);
    // Exact element equality, not jsonb containment: {"k":1} is not {"k":1,"extra":true}.
    expect(await match({ items: { $contains: { k: 1 } } })).toEqual(['a']);
    expect(await match({ items: { $contains: [{ k: 1, extra: true }] } })).toEqual(['d']);
    expect(await match({ tags: { $containsAny: ['x', 'z'] } })).toEqual(['a', 'b']);
    expect(await match({ tags: { $containsAny: ['q'] } })).toEqual([]);
    // An array value tests elements; a string field ("x,y") has none, so it matches.
    expect(await match({ tags: { $notContains: ['x', 'q'] } })).toEqual(['b', 'c', 'd', 'e']);
    expect(await match({ tags: { $notContains: 'y' } })).toEqual(['c', 'e']);
    expect(await match({ title: { $notContains: 'a' } })).toEqual(['d', 'e']);
    expect(await match({ tags: { $size: 2 } })).toEqual(['a', 'b']);
    expect(await match({ tags: { $size: 0 } })).toEqual(['c']);
  });

  it('handles $type', async () => {
    expect(await match({ price: { $type: 'number' } })).toEqual(['a', 'b', 'd']);
    expect(await match({ price: { $type: 'string' } })).toEqual(['c']);
    expect(await match({ tags: { $type: 'array' } })).toEqual(['a', 'b', 'c']);
    expect(await match({ address: { $type: 'object' } })).toEqual(['a', 'b', 'c']);
    expect(await match({ active: { $type: 'boolean' } })).toEqual(['a', 'b', 'c']);
    expect(await match({ note: { $type: 'null' } })).toEqual(['b']);
  });

  it('handles $regex and $iregex on string fields only', async () => {
    expect(await match({ title: { $regex: '^[A-Z]' } })).toEqual(['a', 'b']);
    expect(await match({ title: { $regex: 'notes$' } })).toEqual(['c']);
    expect(await match({ title: { $iregex: '^(alpha|gamma)' } })).toEqual(['a', 'c']);
    expect(await match({ price: { $regex: '2' } })).toEqual(['c']);
    expect(await match({ address: { city: { $iregex: '^paris$' } } })).toEqual(['a', 'c']);
    expect(await match({ title: { $regex: '(?i)^alpha' } })).toEqual(['a']);
    expect(await match({ title: { $regex: '\\mnotes\\M' } })).toEqual(['c']);
    // What only PostgreSQL refuses (invalid_regular_expression, 2201B) surfaces as the store's error.
    await expect(match({ title: { $regex: 'a{2' } })).rejects.toMatchObject({ name: 'StoreError', kind: 'invalid_regex' });
  });

  it('follows dot paths, the nested form and array indexes', async () => {
    expect(await match({ 'address.city': 'Paris' })).toEqual(['a']);
    expect(await match({ address: { city: 'Paris' } })).toEqual(['a']);
    expect(await match({ address: { city: { $in: ['Paris', 'Berlin'] }, zip: { $ne: 'x' } } })).toEqual(['a', 'b']);
    expect(await match({ 'nested.deep.v': { $gte: 1 } })).toEqual(['d']);
    expect(await match({ nested: { 'deep.v': 1 } })).toEqual(['d']);
    expect(await match({ 'items.1.k': 2 })).toEqual(['a']);
    expect(await match({ 'address.city.name': { $ne: 'x' } })).toEqual(['a', 'b', 'c', 'd', 'e']);
    // Keys that would need quoting in an array literal are still one path segment each.
    expect(await match({ 'we"ird\\,{key} ': 'odd' })).toEqual(['d']);
    expect(await match({ NULL: 'n' })).toEqual(['d']);
    expect(await match({ NULL: { $type: 'null' } })).toEqual([]);
  });

  it('nests $and, $or and $not, and lets $not match missing fields', async () => {
    expect(await match({ $or: [{ category: 'music' }, { price: { $gt: 50 } }] })).toEqual(['c', 'd']);
    const either = { $or: [{ price: 10 }, { active: false }] };
    expect(await match({ $and: [{ category: 'books' }, either] })).toEqual(['a', 'b']);
    expect(await match({ category: 'books', $not: { price: 10 } })).toEqual(['b']);
    expect(await match({ $not: { price: { $gt: 20 } } })).toEqual(['a', 'c', 'e']);
    expect(await match({ price: { $not: { $gt: 20 } } })).toEqual(['a', 'c', 'e']);
    const booksOrStringTags = { $or: [{ category: 'books' }, { tags: { $type: 'string' } }] };
    expect(await match({ $not: booksOrStringTags })).toEqual(['c', 'e']);
    expect(await match({ price: { $or: [{ $lt: 20 }, { $gt: 50 }] } })).toEqual(['a', 'd']);
    expect(await match({ $not: { $not: { category: 'music' } } })).toEqual(['c']);
    let deep: unknown = { category: 'books' };
    for (let i = 0; i < 20; i++) deep = { $and: [deep, { $or: [{ price: { $gte: 0 } }, { price: '25' }] }] };
    expect(await match(deep)).toEqual(['a', 'b']);
  });

  it('rejects unknown operators and wrong value kinds, naming the path', () => {
    const cases: [unknown, string][] = [
      [{ price: { $foo: 1 } }, 'metadata_filter.price.$foo'],
      [{ $foo: [] }, 'metadata_filter.$foo'],
      [{ $gt: 5 }, 'metadata_filter.$gt'],
      [{ price: { $gt: true } }, 'metadata_filter.price.$gt'],
      [{ price: { $lte: [1] } }, 'metadata_filter.price.$lte'],
      [{ price: { $gt: null } }, 'metadata_filter.price.$gt'],
      [{ price: { $in: 5 } }, 'metadata_filter.price.$in'],
      [{ price: { $nin: 'x' } }, 'metadata_filter.price.$nin'],
      [{ tags: { $containsAny: 'x' } }, 'metadata_filter.tags.$containsAny'],
      [{ tags: { $size: -1 } }, 'metadata_filter.tags.$size'],
      [{ tags: { $size: 1.5 } }, 'metadata_filter.tags.$size'],
      [{ tags: { $type: 'integer' } }, 'metadata_filter.tags.$type'],
      [{ tags: { $type: 5 } }, 'metadata_filter.tags.$type'],
      [{ title: { $regex: 5 } }, 'metadata_filter.title.$regex'],
      [{ $and: [] }, 'metadata_filter.$and'],
      [{ $or: {} }, 'metadata_filter.$or'],
      [{ $and: ['x'] }, 'metadata_filter.$and[0]'],
      [{ $not: 5 }, 'metadata_filter.$not'],
      [{ price: { $not: 5 } }, 'metadata_filter.price.$not'],
      [{ price: { $not: { a: 1 } } }, 'metadata_filter.price.$not'],
      [{ price: { $gt: 1, other: 2 } }, 'metadata_filter.price'],
      [{ address: { city: { $gt: 1, $bar: 2 } } }, 'metadata_filter.address.city.$bar'],
      [{ $or: [{ a: 1 }, { b: { $zz: 1 } }] }, 'metadata_filter.$or[1].b.$zz'],
      [{ 'a..b': 1 }, 'metadata_filter.a..b'],
      [{ '': 1 }, 'metadata_filter.'],
      [{ ['x'.repeat(256)]: 1 }, `metadata_filter.${'x'.repeat(256)}`],
      ['books', 'metadata_filter'],
      [[{ a: 1 }], 'metadata_filter'],
    ];
    for (const [filter, path] of cases) expectFilterError(() => meta(filter), path);
  });

  it('rejects bad and catastrophic regular expressions', () => {
    const invalid = ['(', 'a[', '*a', '(?b)a', '(?q)a', 'x'.repeat(513)];
    const catastrophic = ['(a+)+', '(a*)*b', '(a|aa)+', '(a|a)*b', '((ab)+c)*', '(?:a?)+', '(x+x+)+y', '(a)\\1'];
    // Quadratic in the text (lookaround), or more states than the budget (counted repetitions).
    const costly = ['(?=a*c)', 'a(?!a*c)c', '(?<=a)b', '(?<!a)b', 'a{1,255}a{1,255}a{1,255}a{1,255}a{1,255}', '(ab{1,200}){1,10}', '[ab]{1,250}[ab]{1,250}[ab]{1,250}[ab]{1,250}c{2,2}'];
    const bad = [...invalid, ...catastrophic, ...costly];
    for (const pattern of bad) {
      expectFilterError(() => meta({ t: { $regex: pattern } }), 'metadata_filter.t.$regex');
    }
    // Harmless shapes stay allowed: escapes, classes, unrepeated or optional groups.
    const fine = ['(?i)(a|b)', '\\(a+\\)+', '[(a+)]+', '(ab)+', '(a|b)?c', '^\\d{4}-\\d{2}$', '(?:foo)bar', '\\\\1', 'a{1,199}a{1,199}a{1,199}a{1,199}a{1,199}c', '\\{1,9999\\}'];
    for (const pattern of fine) {
      expect(() => meta({ t: { $regex: pattern } })).not.toThrow();
    }
  });

  it('caps nesting depth and the number of conditions', () => {
    let deep: unknown = { a: 1 };
    for (let i = 0; i < 40; i++) deep = { $not: deep };
    expectFilterError(() => meta(deep), `metadata_filter${'.$not'.repeat(33)}`);
    let nested: unknown = 1;
    for (let i = 0; i < 40; i++) nested = { f: nested };
    expectFilterError(() => meta(nested), `metadata_filter${'.f'.repeat(33)}`);
    const wide = { $or: Array.from({ length: 1001 }, (_, i) => ({ [`f${i}`]: i })) };
    expectFilterError(() => meta(wide), 'metadata_filter');
    // Elements of array operands count too: each is compared with every document's value.
    expectFilterError(() => meta({ f: { $in: Array.from({ length: 1000 }, (_, i) => i) } }), 'metadata_filter');
    expect(() => meta({ f: { $in: Array.from({ length: 998 }, (_, i) => i) } })).not.toThrow();
  });

  it('binds every key and value, so injection attempts only match nothing', async () => {
    const attack = "a'; DROP TABLE documents; --";
    const filters = [
      { [attack]: 1 },
      { [`${attack}.x`]: { $gt: 1 } },
      { "title') OR true --": { $ne: 'x' }, category: 'nothing' },
      { title: attack },
      { title: { $in: [attack, "' OR '1'='1"] } },
      { title: { $gt: "' OR 1=1 --", $lt: "' OR 1=1 --z" } },
      { title: { $regex: "'; DROP TABLE documents; --" } },
      { title: { $contains: "%' OR '1'='1" } },
      { tags: { $contains: [attack] } },
    ];
    for (const f of filters) expect(await match(f)).toEqual([]);
    const compiled = store.db
      .selectFrom('documents as d')
      .select('d.id')
      .where(meta({ [attack]: { $regex: attack } }))
      .compile();
    expect(compiled.sql).not.toContain('DROP');
    expect(compiled.parameters).toContainEqual([attack]);
    expect(compiled.parameters).toContain(attack);
    expectFilterError(() => dates({ $gt: `2024-01-01'; ${attack}` }), 'created_at_filter.$gt');
    const count = await store.db
      .selectFrom('documents')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(5);
  });

  it('refuses pathological patterns or answers them quickly', async () => {
    const ws = await store.db.selectFrom('workspaces').select('id').executeTakeFirstOrThrow();
    const long = await store.db
      .insertInto('documents')
      .values({
        workspace_id: ws.id,
        file_path: 'long',
        metadata: JSON.stringify({ t: 'a'.repeat(30000) }),
        source: 'test',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    names.set(long.id, 'long');
    try {
      expectFilterError(() => meta({ t: { $regex: '(a|a)*b' } }), 'metadata_filter.t.$regex');
      expectFilterError(() => meta({ t: { $regex: '^(a+)+$' } }), 'metadata_filter.t.$regex');
      // What the guard lets through is left to PostgreSQL's engine, which must not hang on it.
      const started = Date.now();
      expect(await match({ t: { $regex: '^a*a*a*a*a*a*b' } })).toEqual([]);
      expect(await match({ t: { $regex: '[ab]*[ab]*[ab]*c' } })).toEqual([]);
      expect(await match({ t: { $iregex: '(a|b)?(A|B)?a*c' } })).toEqual([]);
      expect(await match({ t: { $regex: 'a{1,199}a{1,199}a{1,199}a{1,199}a{1,199}c' } })).toEqual([]);
      expect(await match({ t: { $iregex: '[a-z]{1,249}[a-z]{1,249}[a-z]{1,249}[a-z]{1,249}c' } })).toEqual([]);
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await store.db.deleteFrom('documents').where('id', '=', long.id).execute();
    }
  });

  it('filters created_at by ISO dates', async () => {
    expect(await matchDates({ $gt: '2024-02-10T12:00:00' })).toEqual(['c', 'd', 'e']);
    expect(await matchDates({ $gte: '2024-02-10T12:00:00Z', $lt: '2024-04-10' })).toEqual(['b', 'c']);
    expect(await matchDates({ $eq: '2024-02-10T14:00:00+02:00' })).toEqual(['b']);
    expect(await matchDates({ $eq: '2024-03-10T12:00:00.25Z' })).toEqual(['c']);
    expect(await matchDates({ $ne: '2024-01-10T12:00:00' })).toEqual(['b', 'c', 'd', 'e']);
    expect(await matchDates({ $lte: '2024-01-10' })).toEqual([]);
    expect(await matchDates({ $in: ['2024-01-10T12:00:00', '2024-05-10T07:00:00-05:00'] })).toEqual(['a', 'e']);
    expect(await matchDates({ $nin: ['2024-01-10T12:00:00'] })).toEqual(['b', 'c', 'd', 'e']);
    expect(await matchDates({ $in: [] })).toEqual([]);
    expect(await matchDates({ $gt: '0099-01-01T00:00:00+15:59', $lt: '9999-12-31T23:59:59.999999Z' })).toHaveLength(5);
    expect(await matchDates(null)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(await matchDates({})).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('rejects bad date filters, naming the filter', () => {
    const cases: [unknown, string][] = [
      [{ $regex: '2024' }, 'created_at_filter.$regex'],
      [{ $contains: '2024' }, 'created_at_filter.$contains'],
      [{ '2024-01-01': 1 }, 'created_at_filter.2024-01-01'],
      [{ $gt: 'yesterday' }, 'created_at_filter.$gt'],
      [{ $gt: '2024-13-01' }, 'created_at_filter.$gt'],
      [{ $gt: '2024-02-30T00:00:00' }, 'created_at_filter.$gt'],
      [{ $gt: '2024-01-01T25:00:00' }, 'created_at_filter.$gt'],
      [{ $gt: '2024-01-01 00:00:00' }, 'created_at_filter.$gt'],
      [{ $gt: '0000-01-01' }, 'created_at_filter.$gt'],
      [{ $gt: '2024-01-01T00:00:60Z' }, 'created_at_filter.$gt'],
      [{ $gt: '2024-01-01T00:00:00+16:00' }, 'created_at_filter.$gt'],
      [{ $gt: 1704067200 }, 'created_at_filter.$gt'],
      [{ $in: '2024-01-01' }, 'created_at_filter.$in'],
      [{ $nin: ['2024-01-01', 'x'] }, 'created_at_filter.$nin[1]'],
      ['2024-01-01', 'created_at_filter'],
    ];
    for (const [filter, path] of cases) {
      expectFilterError(() => dates(filter), path);
    }
  });
});
