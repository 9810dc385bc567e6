// Extraction schemas: what a definition may hold (each problem a 422 item with its place),
// the field description the extractors use, result validation with formats, and the strict
// form sent to a language model.
import { describe, expect, it } from 'vitest';
import { checkExtractionSchema, describeSchema, strictSchema, validationErrors } from '../../src/extraction/schema.js';
import { labelScore, valueKind, vocabulary } from '../../src/extraction/labels.js';

const INVOICE = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'Invoice',
  type: 'object',
  properties: {
    number: { type: 'string', description: 'Invoice number' },
    issued: { type: 'string', format: 'date', description: 'Date of issue' },
    total: { type: 'number', minimum: 0, description: 'Total amount due' },
    paid: { type: ['boolean', 'null'] },
    status: { type: 'string', enum: ['open', 'paid'] },
    contact: { type: 'object', properties: { email: { type: 'string', format: 'email' }, site: { type: 'string', format: 'uri' } } },
    lines: { type: 'array', items: { type: 'object', properties: { item: { type: 'string' }, amount: { type: 'number' } }, required: ['item'] } },
    tags: { type: 'array', items: { type: 'string' }, maxItems: 5 },
    note: { anyOf: [{ type: 'string', maxLength: 200 }, { type: 'null' }], description: 'Free text' },
  },
  required: ['number', 'total'],
  additionalProperties: false,
};

describe('checking schemas', () => {
  it('accepts the supported subset', () => {
    expect(checkExtractionSchema(INVOICE)).toEqual([]);
  });

  it.each([
    [[], ['schema'], 'dict_type'],
    [{ type: 'string' }, ['schema', 'type'], 'schema_type'],
    [{ properties: { a: { type: 'string' } } }, ['schema', 'type'], 'schema_type'],
    [{ type: 'object', properties: [] }, ['schema', 'properties'], 'missing'],
    [{ type: 'object', properties: { a: 'string' } }, ['schema', 'properties', 'a'], 'dict_type'],
    [{ type: 'object', properties: { a: { type: ['string', 'number'] } } }, ['schema', 'properties', 'a', 'type'], 'schema_type'],
    [{ type: 'object', properties: { a: { type: 'string', format: 'ipv4' } } }, ['schema', 'properties', 'a', 'format'], 'schema_format'],
    [{ type: 'object', properties: { a: { type: 'string', enum: [1, 2] } } }, ['schema', 'properties', 'a', 'enum'], 'schema_enum'],
    [{ type: 'object', properties: { a: { type: 'string', oneOf: [] } } }, ['schema', 'properties', 'a', 'oneOf'], 'schema_keyword'],
    [{ type: 'object', properties: { a: { anyOf: [{ type: 'string' }, { type: 'number' }] } } }, ['schema', 'properties', 'a', 'anyOf'], 'schema_type'],
    [{ type: 'object', properties: { a: { type: 'array', items: { type: 'array', items: { type: 'string' } } } } }, ['schema', 'properties', 'a', 'items', 'type'], 'schema_type'],
    [{ type: 'object', properties: { a: { type: 'object', properties: { b: { type: 'object', properties: { c: { type: 'string' } } } } } } }, ['schema', 'properties', 'a', 'properties', 'b'], 'schema_depth'],
    [{ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: {} }, ['schema', 'additionalProperties'], 'bool_type'],
    [{ type: 'object', properties: { a: { type: 'string', description: 7 } } }, ['schema', 'properties', 'a', 'description'], 'string_type'],
    [{ type: 'object', properties: { '': { type: 'string' } } }, ['schema', 'properties', ''], 'schema_property_name'],
    [{ type: 'object', properties: { a: { type: 'string', pattern: '(' } } }, ['schema'], 'schema_invalid'],
    [{ type: 'object', properties: { a: { type: 'integer', maximum: 'ten' } } }, ['schema', 'properties', 'a', 'maximum'], 'schema_invalid'],
  ])('refuses %j at the right place', (schema, path, type) => {
    const issues = checkExtractionSchema(schema);
    expect(issues.length).toBeGreaterThan(0);
    expect(issues[0]).toMatchObject({ path, type });
  });

  it('refuses schemas that are too large or too wide', () => {
    const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`p${i}`, { type: 'string' }])) };
    expect(checkExtractionSchema(wide)[0]).toMatchObject({ type: 'too_long' });
    const large = { type: 'object', properties: { a: { type: 'string', description: 'x'.repeat(70_000) } } };
    expect(checkExtractionSchema(large)[0]).toMatchObject({ path: ['schema'], type: 'too_long' });
  });
});

describe('describing and validating', () => {
  it('describes fields in declaration order with their types', () => {
    const fields = describeSchema(INVOICE);
    expect(fields.map((f) => [f.key, f.type, f.required])).toEqual([
      ['number', 'string', true],
      ['issued', 'string', false],
      ['total', 'number', true],
      ['paid', 'boolean', false],
      ['status', 'string', false],
      ['contact', 'object', false],
      ['lines', 'array', false],
      ['tags', 'array', false],
      ['note', 'string', false],
    ]);
    expect(fields[3].nullable).toBe(true);
    expect(fields[8]).toMatchObject({ nullable: true, description: 'Free text' });
    expect(fields[5].properties.map((f) => f.path)).toEqual([['contact', 'email'], ['contact', 'site']]);
    expect(fields[6].items!.properties.map((f) => [f.key, f.required])).toEqual([
      ['item', true],
      ['amount', false],
    ]);
  });

  it('validates results with formats and says what is wrong', () => {
    expect(validationErrors(INVOICE, { number: 'A-1', total: 10, issued: '2024-02-29', contact: { email: 'a@b.org', site: 'https://b.org/' } })).toEqual([]);
    expect(validationErrors(INVOICE, { number: 'A-1', total: 10, issued: '2023-02-29' })).toEqual(['/issued must match format "date"']);
    expect(validationErrors(INVOICE, { total: 10 })).toEqual(['the record is missing the required property "number"']);
    expect(validationErrors(INVOICE, { number: 'A-1', total: -1 })[0]).toMatch(/\/total must be >= 0/);
    expect(validationErrors(INVOICE, { number: 'A-1', total: 1, other: 1 })).toEqual(['the record has the unknown property "other"']);
    expect(validationErrors(INVOICE, { number: 'A-1', total: 1, contact: { email: 'nope' } })).toEqual(['/contact/email must match format "email"']);
    expect(validationErrors(INVOICE, { number: 'A-1', total: 1, contact: { site: 'www.example.org' } })).toEqual(['/contact/site must match format "uri"']);
  });

  it('writes the strict form for structured outputs: all properties required and nullable, objects closed', () => {
    const strict = strictSchema(INVOICE);
    expect(strict).toMatchObject({ type: 'object', required: ['number', 'issued', 'total', 'paid', 'status', 'contact', 'lines', 'tags', 'note'], additionalProperties: false });
    const props = strict.properties as Record<string, Record<string, unknown>>;
    expect(props.number).toEqual({ type: ['string', 'null'], description: 'Invoice number' });
    expect(props.issued).toEqual({ type: ['string', 'null'], description: 'Date of issue A date as YYYY-MM-DD.' });
    expect(props.status).toEqual({ type: ['string', 'null'], enum: ['open', 'paid', null] });
    expect(props.contact).toMatchObject({ type: ['object', 'null'], required: ['email', 'site'], additionalProperties: false });
    expect(props.lines).toMatchObject({ type: ['array', 'null'], items: { type: 'object', required: ['item', 'amount'], additionalProperties: false } });
    expect(JSON.stringify(strict)).not.toMatch(/"format"|"minimum"|"maxItems"|"\$schema"/);
  });
});

describe('labels', () => {
  it('picks the value kind from type, format and name', () => {
    const kinds = Object.fromEntries(
      describeSchema({
        type: 'object',
        properties: {
          total: { type: 'number', description: 'Amount due' },
          share: { type: 'number', description: 'percentage' },
          pct: { type: 'number' },
          year: { type: 'integer' },
          contact_email: { type: 'string' },
          homepage: { type: 'string' },
          doi: { type: 'string' },
          received: { type: 'string', format: 'date' },
          tags: { type: 'array', items: { type: 'string', format: 'email' } },
        },
      }).map((f) => [f.key, valueKind(f)]),
    );
    expect(kinds).toEqual({ total: 'money', share: 'number', pct: 'percent', year: 'year', contact_email: 'email', homepage: 'url', doi: 'doi', received: 'date', tags: 'email' });
  });

  it('scores labels by the words of the name, synonyms and the description', () => {
    const [received, email, invoiceNumber, author] = describeSchema({
      type: 'object',
      properties: {
        received_date: { type: 'string', format: 'date' },
        email: { type: 'string', description: 'e-mail address of the corresponding author' },
        invoiceNumber: { type: 'string' },
        author: { type: 'string' },
      },
    }).map(vocabulary);
    expect(labelScore('Received', received)).toBe(1);
    expect(labelScore('Date received', received)).toBe(1);
    expect(labelScore('Accepted', received)).toBe(0);
    expect(labelScore('Date', received)).toBeCloseTo(0.3);
    // "E-mail" says only what kind of value follows; "Correspondence" says whose.
    expect(labelScore('E-mail', email)).toBeCloseTo(0.3);
    expect(labelScore('Correspondence', email)).toBe(1);
    expect(labelScore('Invoice No', invoiceNumber)).toBe(1);
    expect(labelScore('Invoice number', invoiceNumber)).toBe(1);
    expect(labelScore('Written by', author)).toBe(1);
    expect(labelScore('Authorization', author)).toBe(0);
    expect(labelScore('Firefox OS (project name', vocabulary({ ...describeSchema({ type: 'object', properties: { name: { type: 'string' } } })[0] }))).toBeLessThan(0.3);
  });
});
