// PDF: one page of text per PDF page, laid out in reading order (pdf-layout.ts) from the
// positioned text runs pdfjs extracts. pdfjs is set up for a server: no network, no eval, no
// system fonts, its own font and CMap data read from node_modules, errors only in the log.
//
// With an OCR service, pages without usable text (none, or glyphs that map to nothing) are
// rendered and recognised, and so are pages whose little text sits on a page mostly covered
// by images (a scan with a stamped line); pages with real text keep their text layer. Pages
// render one after another on this thread while earlier ones are being recognised; progress
// is still reported page by page, in order.

import { createRequire } from 'node:module';
import path from 'node:path';
import { recognisePage } from '../ocr/page.js';
import { imageCoverage, NapiCanvasFactory, renderPage } from '../ocr/pdf-render.js';
import type { OcrService } from '../ocr/types.js';
import { layoutPage, type TextRun } from './pdf-layout.js';
import { sanitize } from './text-utils.js';
import { OCR_OFF_HINT, ParseError, type ParsedDocument, type ProgressCallback } from './types.js';

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
type PdfDocument = Awaited<ReturnType<PdfJs['getDocument']>['promise']>;
type PdfPage = Awaited<ReturnType<PdfDocument['getPage']>>;

interface TextItemLike {
  str: string;
  transform: number[];
  width: number;
  hasEOL?: boolean;
}

interface FieldAnnotation {
  pageIndex?: number;
  fieldName?: string;
  fieldType?: string;
  fieldValue?: unknown;
  rect?: number[];
  hidden?: boolean;
}

// Loaded on first use (the module loader keeps it).
function loadPdfJs(): Promise<PdfJs> {
  return import('pdfjs-dist/legacy/build/pdf.mjs');
}

/** pdfjs's data folders (fonts for the 14 standard fonts, CMaps for CJK), with trailing slashes. */
function dataDirs(): { standardFontDataUrl: string; cMapUrl: string; wasmUrl: string } {
  const root = path.dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));
  return {
    standardFontDataUrl: path.join(root, 'standard_fonts') + path.sep,
    cMapUrl: path.join(root, 'cmaps') + path.sep,
    wasmUrl: path.join(root, 'wasm') + path.sep,
  };
}

/** Below this share of the page covered by text, a page mostly covered by images is read by OCR. */
const SPARSE_TEXT = 0.01;
/** The share of a page images must cover for its sparse text to be doubted. */
const MOSTLY_IMAGE = 0.5;

/** Whether images cover most of the page (a page that cannot be measured counts as not). */
async function mostlyImage(pdfjs: PdfJs, page: PdfPage): Promise<boolean> {
  return (await imageCoverage(pdfjs, page).catch(() => 0)) >= MOSTLY_IMAGE;
}

export async function parsePdf(
  bytes: Uint8Array,
  onProgress?: ProgressCallback,
  ocr?: OcrService | null,
): Promise<ParsedDocument> {
  const pdfjs = await loadPdfJs();
  // pdfjs transfers (detaches) the buffer it is given: hand it a copy.
  const data = new Uint8Array(bytes);
  const task = pdfjs.getDocument({
    data,
    ...dataDirs(),
    cMapPacked: true,
    isEvalSupported: false,
    useSystemFonts: false,
    disableFontFace: true,
    useWorkerFetch: false,
    enableXfa: false,
    stopAtErrors: false,
    verbosity: pdfjs.VerbosityLevel.ERRORS,
    CanvasFactory: NapiCanvasFactory,
  });
  let doc: PdfDocument;
  try {
    doc = await task.promise;
  } catch (err) {
    await task.destroy().catch(() => undefined);
    throw openError(err);
  }
  try {
    const total = doc.numPages;
    const pages: (string | undefined)[] = new Array(total);
    const ocrPages: number[] = [];
    const unreadPages: number[] = [];
    let failed = 0;
    let garbage = 0;
    let reported = 0;
    // Recognitions under way, at most `window` of them; the first failure fails the parse.
    const running = new Set<Promise<void>>();
    const window = Math.max(1, ocr?.concurrency ?? 1) + 1;
    let ocrError: unknown = null;
    const report = () => {
      while (reported < total && pages[reported] !== undefined) {
        reported++;
        onProgress?.(reported, total);
      }
    };
    // Form fields are read only where the document's properties say there are some. Their
    // values come from the widget annotations, read for the whole document at once without
    // pdfjs's collection of every field (page.getAnnotations does it, and so does every
    // operator list or rendering of a page with annotations, annotationMode or not): that
    // collection names each field after all its ancestors, minutes for a tree 10,000 deep.
    // The widgets' names say how deep the tree nests, and a tree past MAX_FIELD_DEPTH is
    // refused before any page is rendered.
    const info = await documentInfo(doc);
    const fields = info?.IsAcroFormPresent === true ? await formFields(pdfjs, doc) : new Map<number, FieldAnnotation[]>();
    const depth = fieldDepth(fields);
    if (depth > MAX_FIELD_DEPTH) {
      throw new ParseError(
        `The PDF nests its form fields ${depth.toLocaleString('en-US')} levels deep; Folio reads at most ${MAX_FIELD_DEPTH} levels`,
      );
    }
    for (let n = 1; n <= total && ocrError === null; n++) {
      let text = '';
      let textShare = 0;
      let page: PdfPage | null = null;
      try {
        page = await doc.getPage(n);
        ({ text, share: textShare } = await pageText(pdfjs, page, fields.get(n - 1) ?? []));
      } catch {
        failed++; // one broken page should not cost the others
      }
      if (text && isGarbage(text)) {
        garbage++;
        text = '';
      }
      text = combineAccents(sanitize(text)).trim();
      let scan: 'none' | 'empty' | 'sparse' = 'none';
      if (ocr && page) {
        if (text === '') scan = 'empty';
        else if (textShare < SPARSE_TEXT && (await mostlyImage(pdfjs, page))) scan = 'sparse';
      }
      if (scan === 'none' || !ocr || !page) {
        if (!ocr && page && text === '' && (await mostlyImage(pdfjs, page))) unreadPages.push(n);
        page?.cleanup();
        pages[n - 1] = text;
        report();
        continue;
      }
      const index = n - 1;
      const layer = text;
      ocr.beginPage?.();
      const rendered = await renderPage(page).finally(() => page.cleanup());
      const job: Promise<void> = recognisePage(ocr, rendered.image, { dpi: rendered.dpi })
        .then(
          (result) => {
            // A page with some text of its own keeps it unless OCR finds clearly more.
            const useOcr = scan === 'empty' || letters(result.text) >= 2 * letters(layer) + 20;
            pages[index] = useOcr ? result.text : layer;
            if (useOcr && result.recognised) ocrPages.push(index + 1);
            report();
          },
          (err: unknown) => {
            ocrError ??= err;
          },
        )
        .finally(() => running.delete(job));
      running.add(job);
      while (running.size >= window) await Promise.race(running);
    }
    await Promise.all(running);
    if (ocrError !== null) throw ocrError;
    if (total > 0 && failed === total) {
      throw new ParseError('The PDF is damaged: none of its pages could be read');
    }
    const texts = pages.map((p) => p ?? '');
    if (!texts.some((p) => p.length > 0)) {
      if (ocr) {
        throw new ParseError('No text could be extracted: the PDF’s pages are images in which OCR found no text');
      }
      if (garbage > 0) {
        throw new ParseError(
          `No text could be extracted: the PDF’s fonts do not map glyphs to characters, so its text reads as garbage; OCR could read it, but ${OCR_OFF_HINT}`,
        );
      }
      throw new ParseError(`No text could be extracted: the PDF appears to be scanned images without a text layer, and ${OCR_OFF_HINT}`);
    }
    const parsed: ParsedDocument = { format: 'pdf', pages: texts, title: pdfTitle(info) };
    if (ocrPages.length > 0) parsed.ocrPages = ocrPages.sort((a, b) => a - b);
    if (unreadPages.length > 0) parsed.unreadPages = unreadPages;
    return parsed;
  } finally {
    await doc.destroy().catch(() => undefined);
  }
}

function letters(text: string): number {
  return text.match(/[\p{L}\p{N}]/gu)?.length ?? 0;
}

function openError(err: unknown): ParseError {
  const e = err as { name?: string; code?: number; message?: string };
  if (e?.name === 'PasswordException') {
    return new ParseError(
      'The PDF is encrypted and needs a password to open; remove the password protection and upload it again',
      { cause: err },
    );
  }
  if (e?.name === 'InvalidPDFException') {
    return new ParseError('The file is not a readable PDF: its structure is invalid (damaged or truncated file)', {
      cause: err,
    });
  }
  return new ParseError(`The PDF could not be read: ${e?.message ?? String(err)}`, { cause: err });
}

/** The page's text in reading order, and the share of the page (0-1) its text runs cover. */
async function pageText(pdfjs: PdfJs, page: PdfPage, fields: FieldAnnotation[]): Promise<{ text: string; share: number }> {
  const viewport = page.getViewport({ scale: 1 });
  const content = await page.getTextContent();
  const runs: TextRun[] = [];
  let rotated = '';
  let area = 0;
  for (const item of content.items as TextItemLike[]) {
    if (typeof item.str !== 'string' || !item.transform) continue;
    const m = pdfjs.Util.transform(viewport.transform, item.transform);
    const size = Math.hypot(m[2], m[3]);
    if (item.str.trim()) area += Math.abs(item.width * (viewport.scale || 1)) * size;
    if (m[0] > 0 && Math.abs(m[1]) <= 0.1 * m[0]) {
      runs.push({ text: item.str, x: m[4], y: m[5], width: item.width * (viewport.scale || 1), size });
    } else if (item.str) {
      // Rotated text (margin stamps, turned table headers) is read in content order after the page.
      rotated += item.str + (item.hasEOL ? '\n' : '');
    } else if (item.hasEOL) {
      rotated += '\n';
    }
  }
  runs.push(...fieldRuns(pdfjs, fields, viewport.transform));
  const text = layoutPage(runs);
  const extra = rotated.replace(/[ \t]+/g, ' ').replace(/\n\s*\n+/g, '\n').trim();
  const pageArea = viewport.width * viewport.height;
  return { text: extra ? `${text}\n\n${extra}` : text, share: pageArea > 0 ? area / pageArea : 0 };
}

/** The deepest nesting of form fields a PDF may have: real forms nest a few levels. */
export const MAX_FIELD_DEPTH = 256;

/**
 * The document's widget annotations (the places form fields show on pages), by page index;
 * none if they cannot be read. getAnnotationsByType reads each widget with its ancestors
 * only, not the whole field tree.
 */
async function formFields(pdfjs: PdfJs, doc: PdfDocument): Promise<Map<number, FieldAnnotation[]>> {
  const byPage = new Map<number, FieldAnnotation[]>();
  let widgets: FieldAnnotation[];
  try {
    widgets = ((await doc.getAnnotationsByType(new Set([pdfjs.AnnotationType.WIDGET]), new Set())) ?? []) as FieldAnnotation[];
  } catch {
    return byPage;
  }
  for (const widget of widgets) {
    if (typeof widget.pageIndex !== 'number') continue;
    const list = byPage.get(widget.pageIndex) ?? [];
    list.push(widget);
    byPage.set(widget.pageIndex, list);
  }
  return byPage;
}

/** How many levels the deepest widget's field name has ("form.address.city": 3). */
function fieldDepth(fields: Map<number, FieldAnnotation[]>): number {
  let depth = 0;
  for (const list of fields.values()) {
    for (const f of list) {
      if (typeof f.fieldName === 'string' && f.fieldName) depth = Math.max(depth, f.fieldName.split('.').length);
    }
  }
  return depth;
}

/** The values typed into form fields, placed where the fields are. */
function fieldRuns(pdfjs: PdfJs, annotations: FieldAnnotation[], transform: number[]): TextRun[] {
  const runs: TextRun[] = [];
  for (const a of annotations) {
    if (a.hidden || !a.rect || (a.fieldType !== 'Tx' && a.fieldType !== 'Ch')) continue;
    const value = Array.isArray(a.fieldValue) ? a.fieldValue.join(', ') : a.fieldValue;
    if (typeof value !== 'string' || !value.trim()) continue;
    const [x1, y1, , y2] = a.rect;
    const height = Math.abs(y2 - y1);
    const size = Math.min(12, Math.max(4, 0.7 * height));
    const baseline = Math.min(y1, y2) + Math.max(0, (height - size) / 2) + 0.2 * size;
    const point = [x1 + 2, baseline];
    pdfjs.Util.applyTransform(point, transform); // in place
    const [x, y] = point;
    for (const [i, line] of value.split(/\r\n?|\n/).entries()) {
      runs.push({ text: line, x, y: y + i * 1.2 * size, width: 0.5 * size * line.length, size });
    }
  }
  return runs;
}

// Control characters, replacement and private-use characters: what undecodable glyphs become.
// eslint-disable-next-line no-control-regex
const BAD_CHAR = /[\u0000-\u0008\u000b\u000e-\u001f\u007f-\u009f\ufffd\ue000-\uf8ff]/gu;
// Glyph names some extractors produce for fonts without a Unicode map ("/g18/g152").
const GLYPH_NAME = /\/(?:g|G|glyph|cid|uni|c)\d+|\/uni[0-9A-Fa-f]{4,}/g;

/** Whether a page's text is mostly undecodable glyphs rather than words. */
export function isGarbage(text: string): boolean {
  const visible = text.replace(/\s+/g, '');
  if (visible.length === 0) return false;
  const bad = (visible.match(BAD_CHAR)?.length ?? 0) + (visible.match(GLYPH_NAME) ?? []).reduce((n, g) => n + g.length, 0);
  return bad > 0.3 * visible.length;
}

// Spacing accents that TeX's older fonts draw as a glyph of their own before the letter
// ("na¨ıve"), with the combining marks they stand for, and the letters they go on.
const ACCENTS: Record<string, string> = { '¨': '\u0308', '´': '\u0301', 'ˆ': '\u0302', '˜': '\u0303', 'ˇ': '\u030c', '˚': '\u030a' };
const ACCENTED = /([¨´ˆ˜ˇ˚])([aeiouyAEIOUYıcnszrgCNSZRGxp])/g;

/** "na¨ıve" -> "naïve", "˜x" -> "x̃". */
export function combineAccents(text: string): string {
  if (!/[¨´ˆ˜ˇ˚]/.test(text)) return text;
  return text.replace(ACCENTED, (_m, accent: string, letter: string) =>
    ((letter === 'ı' ? 'i' : letter) + ACCENTS[accent]).normalize('NFC'),
  );
}

// Titles that are file names or identifiers ("sag-39-3-4-0902-21:sag-0", "Microsoft Word - x.doc").
const JUNK_TITLE = /^untitled\b|\.(?:docx?|pdf|tex|dvi|indd|qxd|rtf|txt|ps)$|^[^\s]*[-_:.\d][^\s]*$/i;

/** The document information dictionary as pdfjs gives it (with its IsAcroFormPresent); null if unreadable. */
async function documentInfo(doc: PdfDocument): Promise<{ Title?: unknown; IsAcroFormPresent?: unknown } | null> {
  try {
    return (await doc.getMetadata()).info as { Title?: unknown; IsAcroFormPresent?: unknown } | null;
  } catch {
    return null;
  }
}

function pdfTitle(info: { Title?: unknown } | null): string | null {
  const raw = info?.Title;
  if (typeof raw !== 'string') return null;
  const title = sanitize(raw)
    .replace(/^Microsoft (?:Word|PowerPoint) - /, '')
    .replace(/\s+/g, ' ')
    .trim();
  return title && !isGarbage(title) && !JUNK_TITLE.test(title) ? title : null;
}
