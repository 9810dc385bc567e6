// declaredFormatMismatch and resolveFormat: a name or declared type naming a binary format
// whose signature the bytes lack makes the file invalid, never text.
import { describe, expect, it } from 'vitest';
import { declaredFormatMismatch, resolveFormat } from '../../src/sources/parsers/index.js';

const TEXT = Buffer.from('Just some notes.\n');
const JUNK = Buffer.from([0, 1, 2, 3, 0, 0, 255, 254, 0, 7, 0, 0, 0, 9]);
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << >> endobj\n%%EOF\n');
const ZIP = Buffer.from([0x50, 0x4b, 0x03, 0x04, ...new Array(26).fill(0)]);
const OLE2 = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, ...new Array(504).fill(0)]);
/** A PNG header complete enough to give a picture size (1 x 1). */
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0]);

const reason = (bytes: Uint8Array, name: string | null, type?: string | null) => declaredFormatMismatch(bytes, name, type)?.reason ?? null;

describe('declaredFormatMismatch', () => {
  it('names the declared format, how it was declared and what the bytes hold', () => {
    expect(reason(TEXT, 'report.pdf', 'application/pdf')).toBe('not a valid PDF: it is declared as application/pdf, but its content is text');
    expect(reason(TEXT, 'notes.txt', 'application/pdf; charset=binary')).toBe('not a valid PDF: it is declared as application/pdf, but its content is text');
    expect(reason(JUNK, 'Scan.PDF', 'application/octet-stream')).toBe('not a valid PDF: it is named .PDF, but its content is binary data');
    expect(reason(PNG, 'report.pdf')).toBe('not a valid PDF: it is named .pdf, but its content is a PNG image');
    expect(reason(TEXT, 'letter.docx')).toBe('not a valid DOCX: it is named .docx, but its content is text');
    expect(reason(PDF, 'letter.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document')).toMatch(/^not a valid DOCX: .*content is a PDF$/);
    expect(reason(TEXT, 'photo.png')).toBe('not a valid PNG image: it is named .png, but its content is text');
    expect(reason(Buffer.from('<html><body>x</body></html>'), 'photo', 'image/jpeg')).toBe('not a valid JPEG image: it is declared as image/jpeg, but its content is an HTML page');
    expect(reason(TEXT, 'scan.tiff')).toMatch(/^not a valid TIFF image/);
    expect(reason(TEXT, 'photo.webp')).toMatch(/^not a valid WebP image/);
    expect(reason(TEXT, 'sheet.xlsx')).toMatch(/^not a valid XLSX workbook/);
    expect(reason(TEXT, 'slides.pptx')).toMatch(/^not a valid PPTX presentation/);
    expect(reason(ZIP, 'old.doc')).toBe('not a valid DOC file: it is named .doc, but its content is a ZIP archive');
    expect(reason(TEXT, 'old.xls')).toMatch(/^not a valid XLS workbook/);
    expect(reason(OLE2, 'slides.pptx')).toBe('not a valid PPTX presentation: it is named .pptx, but its content is a legacy Office file');
  });

  it('accepts bytes that carry the declared signature, and any readable image for an image type', () => {
    expect(reason(PDF, 'report.pdf', 'application/pdf')).toBeNull();
    expect(reason(Buffer.concat([Buffer.from('junk before the header\n'), PDF]), 'report.pdf')).toBeNull();
    expect(reason(ZIP, 'letter.docx')).toBeNull(); // a broken ZIP: the DOCX parser explains
    expect(reason(OLE2, 'secret.docx')).toBeNull(); // an encrypted package or a renamed .doc: left to detection
    expect(reason(PNG, 'photo.png', 'image/png')).toBeNull();
    expect(reason(PNG, 'photo.jpg', 'image/jpeg')).toBeNull();
    expect(reason(ZIP, 'sheet.xlsx')).toBeNull();
    expect(reason(OLE2, 'old.doc', 'application/msword')).toBeNull();
  });

  it('leaves text declared as text, undeclared files and unknown names to detection', () => {
    expect(reason(TEXT, 'report.pdf', 'text/plain')).toBeNull();
    expect(reason(TEXT, 'photo.png', 'text/markdown')).toBeNull();
    expect(reason(TEXT, 'notes.txt', 'application/octet-stream')).toBeNull();
    expect(reason(TEXT, 'notes.bin')).toBeNull();
    expect(reason(JUNK, null, null)).toBeNull();
    expect(reason(TEXT, 'anim.gif', 'image/gif')).toBeNull(); // not a format Folio reads or checks
  });
});

describe('resolveFormat', () => {
  it('is what the bytes hold, or the supported binary format declared in vain', () => {
    expect(resolveFormat(PDF, 'tiny.bin')).toBe('pdf');
    expect(resolveFormat(TEXT, 'notes.txt', 'text/plain')).toBe('text');
    expect(resolveFormat(TEXT, 'report.pdf', 'application/pdf')).toBe('text'); // fails in the worker, as above
    expect(resolveFormat(JUNK, 'scan.pdf')).toBe('pdf');
    expect(resolveFormat(JUNK, 'letter.docx')).toBe('docx');
    expect(resolveFormat(JUNK, 'photo.png')).toBe('image');
  });

  it('refuses what is unsupported, declared or not', () => {
    expect(resolveFormat(JUNK, 'x.dat')).toBeNull();
    expect(resolveFormat(JUNK, 'sheet.xlsx')).toBeNull();
    expect(resolveFormat(OLE2, 'old.doc')).toBeNull();
    expect(resolveFormat(ZIP, 'sheet.xlsx')).toBeNull();
  });
});
