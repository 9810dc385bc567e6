// Small documents built by hand for tests and benchmarks: ZIP packages, DOCX, PDF.
import { crc32, deflateRawSync } from 'node:zlib';

const utf8 = (text: string) => new TextEncoder().encode(text);

/** A ZIP archive of the given files (deflated unless `stored`). */
export function zip(files: Record<string, string | Uint8Array>, stored = false): Uint8Array {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, content] of Object.entries(files)) {
    const data = Buffer.from(typeof content === 'string' ? utf8(content) : content);
    const body = stored ? data : deflateRawSync(data);
    const nameBytes = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(stored ? 0 : 8, 8);
    local.writeUInt32LE(crc32(data), 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(stored ? 0 : 8, 10);
    central.writeUInt32LE(crc32(data), 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, body);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + body.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(files).length, 8);
  end.writeUInt16LE(Object.keys(files).length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return new Uint8Array(Buffer.concat([...locals, directory, end]));
}

export const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
export const para = (text: string, props = '') => `<w:p>${props ? `<w:pPr>${props}</w:pPr>` : ''}<w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`;

/** A minimal DOCX whose body is the given WordprocessingML. */
export function docx(body: string, title?: string, parts: Record<string, string | Uint8Array> = {}): Uint8Array {
  const files: Record<string, string | Uint8Array> = {
    '[Content_Types].xml':
      '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
      '<Default Extension="xml" ContentType="application/xml"/>' +
      '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    '_rels/.rels':
      '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
    'word/document.xml': `<?xml version="1.0"?><w:document ${W}><w:body>${body}</w:body></w:document>`,
  };
  if (title) {
    files['docProps/core.xml'] =
      '<?xml version="1.0"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" ' +
      `xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>${title}</dc:title></cp:coreProperties>`;
  }
  return zip({ ...files, ...parts });
}

/** A PDF of the given objects (1-based, "n 0 obj" added), with a correct xref table. */
export function pdf(objects: string[]): Uint8Array {
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) out += `${String(offset).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new Uint8Array(Buffer.from(out, 'latin1'));
}

/** A stream object holding `content`, with `entries` added to its dictionary. */
export const stream = (content: string, entries = '') => `<< /Length ${content.length}${entries} >>\nstream\n${content}\nendstream`;
export const FONT = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';

/** One-page PDFs with text drawn by the given content stream (font /F1 = Helvetica). */
export function textPdf(content: string, extra: { annots?: string; objects?: string[]; catalog?: string } = {}): Uint8Array {
  return pdf([
    `<< /Type /Catalog /Pages 2 0 R${extra.catalog ?? ''} >>`,
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >>${extra.annots ? ` /Annots ${extra.annots}` : ''} >>`,
    stream(content),
    FONT,
    ...(extra.objects ?? []),
  ]);
}

/** A PDF with one page per entry, each drawing its text as one line (Helvetica). */
export function pagesPdf(texts: string[]): Uint8Array {
  const first = 4; // objects 1-3: catalog, page tree, font
  const kids = texts.map((_, i) => `${first + 2 * i} 0 R`).join(' ');
  const objects = ['<< /Type /Catalog /Pages 2 0 R >>', `<< /Type /Pages /Kids [${kids}] /Count ${texts.length} >>`, FONT];
  texts.forEach((text, i) => {
    const escaped = text.replace(/[\\()]/g, (c) => `\\${c}`);
    objects.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${first + 2 * i + 1} 0 R /Resources << /Font << /F1 3 0 R >> >> >>`,
      stream(`BT /F1 12 Tf 72 720 Td (${escaped}) Tj ET`),
    );
  });
  return pdf(objects);
}
