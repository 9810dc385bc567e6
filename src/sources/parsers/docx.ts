// DOCX: mammoth's HTML (which keeps headings, lists and tables) turned into text. mammoth drops
// page breaks, so a style-map rule turns each <w:br w:type="page"/> into a marker element, and
// paragraphs with <w:pageBreakBefore/> get such a break in document.xml before mammoth reads
// it (mammoth reads the package through our ZIP reader, which serves the edited part).

import { parseHTML } from 'linkedom';
import { containsUtf16, isOle2 } from './detect.js';
import { htmlToText } from './html-text.js';
import { paginate, sanitize, tidy } from './text-utils.js';
import { isStackOverflow, ParseError, type ParsedDocument } from './types.js';
import { xmlDepth } from './xml-depth.js';
import { ZipArchive, ZipLimitError } from './zip.js';

const PAGE_BREAK_CLASS = 'folio-page-break';
const STYLE_MAP = [`br[type='page'] => hr.${PAGE_BREAK_CLASS}`];
// Inflated sizes beyond which a package is refused: a zip bomb, not a document. The text of a
// 2,000-page book is about 10 MiB of WordprocessingML; these leave room for heavy markup
// while a parse stays well inside the parser thread's memory limit.
export const MAX_PART_BYTES = 64 * 1024 * 1024;
export const MAX_PACKAGE_BYTES = 128 * 1024 * 1024;
// mammoth converts each XML part with functions that call themselves once per element, so a
// part nested past what the stack holds fails (about 900 levels on a main thread, tables in
// tables). Real documents nest a few dozen levels; a table in a table adds three.
export const MAX_DOCX_DEPTH = 256;

/** The part of the package mammoth reads through (its `{file}` input). */
interface MammothZip {
  exists(name: string): boolean;
  read(name: string, encoding?: string): Promise<string | Uint8Array>;
}

export async function parseDocx(bytes: Uint8Array): Promise<ParsedDocument> {
  if (isOle2(bytes)) {
    throw new ParseError(
      containsUtf16(bytes, 'EncryptedPackage')
        ? 'The DOCX is encrypted and needs a password; remove the password in Word and upload it again'
        : 'This is a legacy Word 97-2003 (.doc) file, which is not supported; save it as .docx and upload it again',
    );
  }
  let zip: ZipArchive;
  try {
    zip = new ZipArchive(bytes, MAX_PACKAGE_BYTES);
  } catch (err) {
    throw new ParseError('The file is not a valid DOCX (not a readable zip archive)', { cause: err });
  }
  const main = mainDocumentPath(zip);
  if (!main) throw new ParseError('The file is not a valid DOCX (zip archive without word/document.xml)');

  const parts = new Map<string, string>();
  const readPart = (name: string): string => {
    let data: Uint8Array;
    try {
      data = zip.read(name, MAX_PART_BYTES);
    } catch (err) {
      throw tooLarge(err) ?? new ParseError(`The DOCX is damaged: its part ${name} cannot be read`, { cause: err });
    }
    return shallow(name, new TextDecoder().decode(data));
  };
  parts.set(main, withBreaksBefore(readPart(main)));
  const file: MammothZip = {
    exists: (name) => zip.has(name),
    read: async (name, encoding) => {
      const text = parts.get(name);
      if (text !== undefined) return encoding ? text : new TextEncoder().encode(text);
      let data: Uint8Array;
      try {
        data = zip.read(name, MAX_PART_BYTES);
      } catch (err) {
        throw tooLarge(err) ?? err;
      }
      if (encoding === 'base64') return Buffer.from(data).toString('base64');
      return encoding ? shallow(name, new TextDecoder(encoding).decode(data)) : data;
    },
  };

  const mammoth = (await import('mammoth')).default;
  let html: string;
  try {
    const result = await mammoth.convertToHtml({ file } as unknown as { buffer: Buffer }, {
      styleMap: STYLE_MAP,
      // Images are not text: skip encoding them as data URIs.
      convertImage: mammoth.images.imgElement(async () => ({ src: '' })),
    });
    html = result.value;
  } catch (err) {
    if (err instanceof ParseError || isStackOverflow(err)) throw err;
    const message = (err as Error)?.message ?? String(err);
    if (/main document part/i.test(message)) {
      throw new ParseError('The file is not a valid DOCX (zip archive without word/document.xml)', { cause: err });
    }
    throw new ParseError(`The DOCX could not be read: ${message}`, { cause: err });
  }

  const { document } = parseHTML(`<!DOCTYPE html><html><body>${html}</body></html>`);
  const text = htmlToText(document.body, {
    isPageBreak: (el) => el.classList.contains(PAGE_BREAK_CLASS),
    skip: isNoteLink,
  });
  const pages = text
    .split('\f')
    .flatMap((section) => paginate(tidy(sanitize(section))));
  return { format: 'docx', pages, title: coreTitle(zip) ?? firstHeading(document.body) };
}

/** The text of part `name`, unless its elements nest deeper than mammoth may be given. */
function shallow(name: string, xml: string): string {
  const depth = xmlDepth(xml);
  if (depth > MAX_DOCX_DEPTH) {
    throw new ParseError(
      `The DOCX nests its elements ${depth.toLocaleString('en-US')} levels deep in ${name} (tables within tables, or the like); Folio reads at most ${MAX_DOCX_DEPTH} levels`,
    );
  }
  return xml;
}

/** The failure a package that inflates beyond the limits ends with; null for other errors. */
function tooLarge(err: unknown): ParseError | null {
  if (!(err instanceof ZipLimitError)) return null;
  return new ParseError(`The DOCX is too large to read: ${err.message}`, { cause: err });
}

/** The main part named by the package relationships, else the usual path. */
function mainDocumentPath(zip: ZipArchive): string | null {
  if (zip.has('_rels/.rels')) {
    try {
      const rels = new TextDecoder().decode(zip.read('_rels/.rels', 1 << 20));
      for (const rel of rels.match(/<Relationship\b[^>]*>/g) ?? []) {
        if (!/Type="[^"]*\/officeDocument"/.test(rel)) continue;
        const target = /Target="([^"]+)"/.exec(rel)?.[1]?.replace(/^\//, '');
        if (target && zip.has(target)) return target;
      }
    } catch {
      // fall through to the usual path
    }
  }
  return zip.has('word/document.xml') ? 'word/document.xml' : null;
}

// A paragraph's properties that ask for a page break before it (not w:val="false"/"0"/"off";
// not properties inside a tracked change).
const BREAK_BEFORE =
  /(<(\w+):pPr\b[^>]*>)((?:(?!<\/\2:pPr>|<\2:pPrChange\b)[\s\S])*?<\2:pageBreakBefore\b(?![^>]*\b\2:val="(?:false|0|off)")[^>]*\/>(?:(?!<\2:pPrChange\b)[\s\S])*?<\/\2:pPr>)/g;

/** document.xml with an explicit page-break run at the start of each page-break-before paragraph. */
export function withBreaksBefore(xml: string): string {
  return xml.replace(BREAK_BEFORE, (_all, open: string, prefix: string, rest: string) => {
    return `${open}${rest}<${prefix}:r><${prefix}:br ${prefix}:type="page"/></${prefix}:r>`;
  });
}

/** mammoth's footnote/endnote/comment reference marks ("[1]") and back-links ("↑"). */
function isNoteLink(el: Element): boolean {
  if (el.localName.toLowerCase() !== 'a') return false;
  const href = el.getAttribute('href') ?? '';
  if (!href.startsWith('#')) return false;
  return /(?:footnote|endnote|comment)-ref-/.test(el.getAttribute('id') ?? '') || (el.textContent ?? '').trim() === '↑';
}

function coreTitle(zip: ZipArchive): string | null {
  if (!zip.has('docProps/core.xml')) return null;
  try {
    const xml = new TextDecoder().decode(zip.read('docProps/core.xml', 1 << 20));
    const raw = /<dc:title\b[^>]*>([\s\S]*?)<\/dc:title>/.exec(xml)?.[1] ?? '';
    const title = decodeXmlText(raw).replace(/\s+/g, ' ').trim();
    return title ? sanitize(title) : null;
  } catch {
    return null;
  }
}

function firstHeading(body: Element): string | null {
  const heading = body.querySelector('h1, h2');
  const title = (heading?.textContent ?? '').replace(/\s+/g, ' ').trim();
  return title ? sanitize(title) : null;
}

function decodeXmlText(text: string): string {
  return text.replace(/&(?:#(\d+)|#x([0-9a-f]+)|(amp|lt|gt|quot|apos));/gi, (_m, dec, hex, named: string) => {
    const code = dec ? Number(dec) : hex ? Number.parseInt(hex, 16) : -1;
    if (code >= 0) return code <= 0x10ffff ? String.fromCodePoint(code) : '';
    return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[named.toLowerCase()] ?? '';
  });
}
