// The offline extractor on real documents of the corpus, with the ground truth written here
// from the documents themselves (title pages, article headers, infoboxes, tables; the EU
// table from multicolumn.tex), and on small made-up texts for each cue it uses.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { extractOffline } from '../../src/extraction/offline.js';
import { checkExtractionSchema, validationErrors } from '../../src/extraction/schema.js';
import { detectFormat, parseDocument } from '../../src/sources/parsers/index.js';
import { CORPUS_DOCS as DOCS } from '../helpers/corpus.js';

async function pagesOf(file: string): Promise<{ pages: string[]; title: string | null }> {
  const bytes = fs.readFileSync(path.join(DOCS, file));
  const doc = await parseDocument(bytes, detectFormat(bytes, file, null)!);
  return { pages: doc.pages, title: doc.title };
}

function object(properties: Record<string, unknown>, required?: string[]): Record<string, unknown> {
  const schema = { type: 'object', properties, ...(required ? { required } : {}) };
  expect(checkExtractionSchema(schema)).toEqual([]);
  return schema;
}

/** Extracts and checks that every record validates against the schema. */
function extract(schema: Record<string, unknown>, multiple: boolean, input: { pages: string[]; title?: string | null }) {
  const records = extractOffline(schema, multiple, input);
  for (const record of records) expect(validationErrors(schema, record)).toEqual([]);
  return records;
}

describe('offline extraction from corpus documents', () => {
  it('bitcoin.pdf: title, author and contacts from the title page', async () => {
    const schema = object({
      title: { type: 'string', description: 'Title of the paper' },
      author: { type: 'string', description: 'Name of the author' },
      email: { type: 'string', format: 'email', description: "The author's e-mail address" },
      website: { type: 'string', format: 'uri' },
    });
    expect(extract(schema, false, await pagesOf('pdf/text/bitcoin.pdf'))).toEqual([
      { title: 'Bitcoin: A Peer-to-Peer Electronic Cash System', author: 'Satoshi Nakamoto', email: 'satoshin@gmx.com', website: 'https://www.bitcoin.org/' },
    ]);
  });

  it('label-test.pdf: the journal details of a medical article', async () => {
    const schema = object({
      title: { type: 'string', description: 'Title of the article' },
      author: { type: 'string', description: 'Name of the corresponding author' },
      email: { type: 'string', format: 'email', description: 'E-mail address of the corresponding author' },
      doi: { type: 'string' },
      year: { type: 'integer' },
      volume: { type: 'integer' },
      issue: { type: 'integer' },
      pages: { type: 'string', description: 'Page range' },
      received_date: { type: 'string', format: 'date', description: 'Date the manuscript was received' },
      accepted_date: { type: 'string', format: 'date', description: 'Date the manuscript was accepted' },
      keywords: { type: 'array', items: { type: 'string' } },
    });
    expect(extract(schema, false, await pagesOf('pdf/text/label-test.pdf'))).toEqual([
      {
        title: 'Acute effect of speed exercise on nitric oxide (NO) level of footballers',
        author: 'Özcan SAYGIN',
        // The corresponding author's, not the journal's "E-mail: medsci@tubitak.gov.tr".
        email: 'osaygin@mu.edu.tr',
        doi: '10.3906/sag-0902-21',
        year: 2009,
        volume: 39,
        issue: 3,
        pages: '361-365',
        received_date: '2009-02-25',
        accepted_date: '2009-04-30',
        keywords: ['Nitric oxide', 'speed exercise', 'footballer'],
      },
    ]);
  });

  it('tracemonkey.pdf: a two-line title and an author list over three lines', async () => {
    const schema = object({ title: { type: 'string' }, authors: { type: 'array', items: { type: 'string' }, description: 'Author names' } });
    const [record] = extract(schema, false, await pagesOf('pdf/text/tracemonkey.pdf'));
    expect(record.title).toBe('Trace-based Just-in-Time Type Specialization for Dynamic Languages');
    expect(record.authors).toHaveLength(16);
    expect((record.authors as string[]).slice(0, 3)).toEqual(['Andreas Gal', 'Brendan Eich', 'Mike Shaver']);
    expect((record.authors as string[]).at(-1)).toBe('Michael Franz');
  });

  it('multicolumn.pdf: the title block, and the EU table as records (header cells merged by the PDF split by the schema)', async () => {
    const input = await pagesOf('pdf/text/multicolumn.pdf');
    const header = object({ title: { type: 'string' }, author: { type: 'string' }, date: { type: 'string', format: 'date' } });
    expect(extract(header, false, input)).toEqual([{ title: 'Two-Column Document with Lorem Ipsum', author: 'Your Name', date: '2024-01-03' }]);

    const countries = object(
      {
        country: { type: 'string' },
        population: { type: 'number', description: 'Population in millions' },
        area: { type: 'integer', description: 'Area in km2' },
        capital: { type: 'string' },
        official_language: { type: 'string' },
      },
      ['country'],
    );
    const records = extract(countries, true, input);
    // Ground truth: multicolumn.tex. The PDF text runs "Brussels" and "Dutch, French, German"
    // together in one cell, so Belgium's last two cells cannot be told apart.
    expect(records).toHaveLength(5);
    expect(records.filter((r) => r.country !== 'Belgium')).toEqual([
      { country: 'Austria', population: 8.9, area: 83879, capital: 'Vienna', official_language: 'German' },
      { country: 'Czech Republic', population: 10.7, area: 78866, capital: 'Prague', official_language: 'Czech' },
      { country: 'Denmark', population: 5.8, area: 42951, capital: 'Copenhagen', official_language: 'Danish' },
      { country: 'Finland', population: 5.5, area: 338424, capital: 'Helsinki', official_language: 'Finnish, Swedish' },
    ]);
    expect(records[1]).toMatchObject({ country: 'Belgium', population: 11.5, area: 30689 });
  });

  it('ietf-1.html: an Internet-Draft header laid out in two columns', async () => {
    const schema = object({
      title: { type: 'string' },
      document: { type: 'string', description: 'Name of the draft' },
      intended_status: { type: 'string' },
      expires: { type: 'string', format: 'date', description: 'Expiry date' },
      author: { type: 'string' },
    });
    expect(extract(schema, false, await pagesOf('html/ietf-1.html'))).toEqual([
      { title: 'remoteStorage', document: 'draft-dejong-remotestorage-04', intended_status: 'Proposed Standard', expires: '2015-06-18', author: 'Michiel B. de Jong' },
    ]);
  });

  it('wikipedia.html: infobox rows as labels and values', async () => {
    const schema = object({
      founded: { type: 'string', format: 'date', description: 'Date founded' },
      founder: { type: 'string' },
      industry: { type: 'string' },
      website: { type: 'string', format: 'uri' },
    });
    expect(extract(schema, false, await pagesOf('html/wikipedia.html'))).toEqual([
      { founded: '1998-02-28', founder: 'Netscape Communications Corporation', industry: 'Open-source software', website: 'https://www.mozilla.org/tr/' },
    ]);
  });

  it('keep-tabular-data.html: the byline, and the rows of a table whose header names no property', async () => {
    const input = await pagesOf('html/keep-tabular-data.html');
    const post = object({
      title: { type: 'string' },
      published: { type: 'string', format: 'date', description: 'Date the post was published' },
      authors: { type: 'array', items: { type: 'string' }, description: 'Who posted it' },
    });
    expect(extract(post, false, input)).toEqual([
      { title: 'Friday Facts #282 - 0.17 in sight | Factorio', published: '2019-02-15', authors: ['kovarex', 'TOGos', 'Ernestas', 'Albert'] },
    ]);
    const screens = extract(object({ screen: { type: 'string', description: 'Name of the GUI screen' } }, ['screen']), true, input);
    expect(screens).toHaveLength(23);
    expect(screens[0]).toEqual({ screen: 'Load map' });
    expect(screens.at(-1)).toEqual({ screen: 'Recipe explorer ?' });
  });

  it('pride-and-prejudice.txt: a novel without a title page gives no title or author rather than a line of prose', async () => {
    const schema = object({ title: { type: 'string' }, author: { type: 'string' } });
    const input = await pagesOf('txt/pride-and-prejudice.txt');
    expect(extract(schema, false, input)).toEqual([{}]);
    expect(extract(schema, true, input)).toEqual([]);
  });

  it('pandoc-tables.docx: one record per row of the table with a header', async () => {
    const schema = object({ name: { type: 'string', description: 'Player name' }, game: { type: 'string', description: 'Sport played' }, fame: { type: 'string' }, blame: { type: 'string' } }, ['name']);
    expect(extract(schema, true, await pagesOf('docx/pandoc-tables.docx'))).toEqual([
      { name: 'Lebron James', game: 'Basketball', fame: 'Very High', blame: 'Leaving Cleveland' },
      { name: 'Ryan Braun', game: 'Baseball', fame: 'Moderate', blame: 'Steroids' },
      { name: 'Russell Wilson', game: 'Football', fame: 'High', blame: 'Tacky uniform' },
    ]);
  });

  it('simple-table.pdf: a table without a header, columns taken in order by type', async () => {
    const schema = object({ a: { type: 'integer' }, b: { type: 'integer' }, c: { type: 'integer' }, d: { type: 'integer' } });
    expect(extract(schema, true, await pagesOf('pdf/text/simple-table.pdf'))).toEqual([
      { a: 1, b: 2, c: 3, d: 4 },
      { a: 10, b: 20, c: 30, d: 40 },
      { a: 100, b: 200, c: 300, d: 400 },
      { a: 1000, b: 2000, c: 3000, d: 4000 },
    ]);
  });
});

describe('offline extraction cues', () => {
  const INVOICE = [
    'ACME Supplies Ltd.',
    'Invoice',
    '',
    'Invoice No: INV-2024-0042',
    'Invoice date: 03/15/2024',
    'Due date: 15 April 2024',
    'Bill to: Jane Roe',
    'Contact: billing@acme.example   Phone: +1 (555) 010-4477',
    'Website: https://acme.example/billing',
    '',
    'Item | Qty | Unit price | Amount',
    'Paper A4 | 10 | $4.50 | $45.00',
    'Toner | 2 | $89.99 | $179.98',
    'Stapler | 1 | $12.00 | $12.00',
    '',
    'Subtotal: $236.98',
    'Tax (8%): $18.96',
    'Total due: $1,255.94',
    'Paid: No',
    'Status: Overdue',
    '[x] Sent by post',
    '☐ Express',
  ].join('\n');

  it('reads an invoice: labels, typed values, enums, check boxes, nested objects and line items', () => {
    const schema = object({
      invoice_number: { type: 'string', description: 'The invoice number' },
      invoice_date: { type: 'string', format: 'date' },
      due_date: { type: 'string', format: 'date' },
      customer: { type: 'string', description: 'Who the invoice is billed to' },
      email: { type: 'string', format: 'email' },
      phone: { type: 'string' },
      website: { type: 'string', format: 'uri' },
      total: { type: 'number', description: 'Total amount due' },
      subtotal: { type: 'number' },
      tax: { type: 'number', description: 'Tax amount' },
      paid: { type: 'boolean', description: 'Whether the invoice was paid' },
      status: { type: 'string', enum: ['Paid', 'Open', 'Overdue'] },
      sent_by_post: { type: 'boolean' },
      express: { type: 'boolean' },
      vendor: { type: 'object', properties: { name: { type: 'string', description: 'Company name' } } },
      lines: { type: 'array', items: { type: 'object', properties: { item: { type: 'string' }, quantity: { type: 'integer' }, unit_price: { type: 'number' }, amount: { type: 'number' } } } },
    });
    expect(extract(schema, false, { pages: [INVOICE] })).toEqual([
      {
        invoice_number: 'INV-2024-0042',
        invoice_date: '2024-03-15',
        due_date: '2024-04-15',
        customer: 'Jane Roe',
        email: 'billing@acme.example',
        phone: '+1 (555) 010-4477',
        website: 'https://acme.example/billing',
        total: 1255.94,
        subtotal: 236.98,
        tax: 18.96,
        paid: false,
        status: 'Overdue',
        sent_by_post: true,
        express: false,
        vendor: { name: 'ACME Supplies Ltd.' },
        lines: [
          { item: 'Paper A4', quantity: 10, unit_price: 4.5, amount: 45 },
          { item: 'Toner', quantity: 2, unit_price: 89.99, amount: 179.98 },
          { item: 'Stapler', quantity: 1, unit_price: 12, amount: 12 },
        ],
      },
    ]);
  });

  it('turns repeated label-value blocks into records, and drops those without a required field', () => {
    const text = ['Staff list', '', 'Name: Ada Lovelace', 'Born: 10 December 1815', 'Email: ada@example.org', '', 'Name: Alan Turing', 'Born: 23 June 1912', '', 'Born: 9 December 1906', 'Email: grace@example.org'].join('\n');
    const schema = object({ name: { type: 'string' }, birth_date: { type: 'string', format: 'date', description: 'Date of birth' }, email: { type: 'string', format: 'email' } }, ['name']);
    expect(extract(schema, true, { pages: [text] })).toEqual([
      { name: 'Ada Lovelace', birth_date: '1815-12-10', email: 'ada@example.org' },
      { name: 'Alan Turing', birth_date: '1912-06-23' },
    ]);
  });

  it('reads Markdown tables with European numbers and yes/no cells; records across pages share a header', () => {
    const page = (rows: string[]) => ['| Product | Price | In stock |', '|---|---:|:-:|', ...rows].join('\n');
    const schema = object({ product: { type: 'string' }, price: { type: 'number' }, in_stock: { type: 'boolean' } });
    expect(extract(schema, true, { pages: [page(['| Apple | €1,20 | yes |', '| Pear | €0,95 | no |']), page(['| Plum | €2,05 | ✓ |'])] })).toEqual([
      { product: 'Apple', price: 1.2, in_stock: true },
      { product: 'Pear', price: 0.95, in_stock: false },
      { product: 'Plum', price: 2.05, in_stock: true },
    ]);
  });

  it('leaves out what it does not find, and never takes a value of the wrong type', () => {
    const schema = object({ total: { type: 'number', description: 'Total amount' }, due: { type: 'string', format: 'date' }, author: { type: 'string' } });
    const text = 'Total: to be confirmed\nDue: next week\nA short note without names.';
    expect(extract(schema, false, { pages: [text] })).toEqual([{}]);
    expect(extract(schema, true, { pages: [text] })).toEqual([]);
  });

  it('uses a title from the file or the metadata over the text', () => {
    const schema = object({ title: { type: 'string' } });
    expect(extract(schema, false, { pages: ['Some Heading Of The Page\n\nBody text follows here.'], title: 'The Real Title' })).toEqual([{ title: 'The Real Title' }]);
    expect(extract(schema, false, { pages: ['Title: Labelled Title\n\nBody text.'], title: 'Metadata Title' })).toEqual([{ title: 'Labelled Title' }]);
  });

  it('honours enum, bounds and patterns of the schema', () => {
    const schema = object({
      currency: { type: 'string', enum: ['EUR', 'USD'] },
      rating: { type: 'integer', minimum: 1, maximum: 5 },
      code: { type: 'string', pattern: '^[A-Z]{3}-\\d+$' },
    });
    expect(extract(schema, false, { pages: ['Currency: usd\nRating: 7\nCode: abc-1\nCode: XYZ-42'] })).toEqual([{ currency: 'USD', code: 'XYZ-42' }]);
  });
});
