// Format detection from the bytes. The file name and the declared content type are hints that
// only choose between formats the bytes allow (markdown or plain text, a ZIP that claims to be
// a DOCX); they never make a binary file text or a text file a PDF. A file they declare as a
// binary format whose signature its bytes lack is not read as something else: it is invalid
// (declaredFormatMismatch), and the worker fails its task saying so.

import { imageKind, type ImageKind } from '../ocr/image.js';
import { decodeText, looksLikeText } from './encoding.js';
import type { DocumentFormat } from './types.js';
import { isZip, ZipArchive } from './zip.js';

const OLE2 = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

// Binary formats that can pass for text in a short sample (their headers are ASCII).
const BINARY_TEXT_MAGIC = [/^\{\\rtf/, /^%!PS/, /^GIF8[79]a/, /^\x89PNG/, /^RIFF/, /^II\*\0|^MM\0\*/];

const MARKDOWN_EXT = /\.(?:md|markdown|mdown|mkdn|mkd|mdwn)$/i;
const HTML_EXT = /\.(?:html?|xhtml)$/i;
const DOCX_EXT = /\.(?:docx|docm|dotx|dotm)$/i;
const DOCX_TYPE = /wordprocessingml|^application\/vnd\.ms-word\.(?:document|template)\.macroenabled/i;

/**
 * The format of a file from its bytes; the name and content type only break ties (markdown
 * versus text, an empty or broken ZIP that claims to be a DOCX). 'image' for PNG, JPEG, WebP
 * and TIFF whose header gives a picture size (text by OCR). Null when unsupported: legacy
 * Office (.doc/.xls/.ppt), other OOXML (.pptx/.xlsx), other archives, other images (GIF, BMP,
 * SVG...), executables and any other binary data.
 */
export function detectFormat(
  bytes: Uint8Array,
  filename?: string | null,
  contentType?: string | null,
): DocumentFormat | null {
  const name = (filename ?? '').trim();
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();

  if (findPdfHeader(bytes) >= 0) return 'pdf';
  if (imageKind(bytes)) return 'image';

  const claimsDocx = DOCX_EXT.test(name) || DOCX_TYPE.test(type);
  if (isZip(bytes)) return zipFormat(bytes, claimsDocx);
  // An encrypted DOCX is an OLE2 container holding an "EncryptedPackage" stream: let the DOCX
  // parser say it needs a password rather than answering "unsupported".
  if (isOle2(bytes)) return claimsDocx && containsUtf16(bytes, 'EncryptedPackage') ? 'docx' : null;

  if (!looksLikeText(bytes)) return null;
  const head = decodeText(bytes.subarray(0, 8192)).text.replace(/^\uFEFF/, '');
  if (BINARY_TEXT_MAGIC.some((magic) => magic.test(head))) return null;
  if (looksLikeHtmlDocument(head)) return 'html';
  if (HTML_EXT.test(name) || type === 'text/html' || type === 'application/xhtml+xml') return 'html';
  if (MARKDOWN_EXT.test(name) || type === 'text/markdown' || type === 'text/x-markdown') return 'markdown';
  return 'text';
}

/** Offset of "%PDF-" within the first KiB (readers accept junk before it), or -1. */
export function findPdfHeader(bytes: Uint8Array): number {
  const end = Math.min(bytes.length - 5, 1024);
  for (let i = 0; i <= end; i++) {
    if (bytes[i] === 0x25 && bytes[i + 1] === 0x50 && bytes[i + 2] === 0x44 && bytes[i + 3] === 0x46 && bytes[i + 4] === 0x2d) {
      return i;
    }
  }
  return -1;
}

function zipFormat(bytes: Uint8Array, claimsDocx: boolean): DocumentFormat | null {
  let names: string[];
  try {
    names = [...new ZipArchive(bytes).entries.keys()];
  } catch {
    return claimsDocx ? 'docx' : null; // a broken ZIP named .docx: the parser explains what is wrong
  }
  if (names.some((n) => n.startsWith('word/'))) return 'docx';
  // Another OOXML or OpenDocument package, an EPUB, a JAR...: not ours, whatever the name says.
  if (names.some((n) => /^(?:ppt|xl)\/|^mimetype$|^META-INF\//.test(n))) return null;
  return claimsDocx ? 'docx' : null;
}

/** Whether text starts like an HTML document (after a BOM, whitespace, comments, an XML declaration). */
function looksLikeHtmlDocument(head: string): boolean {
  const start = head.replace(/^(?:\s+|<!--[\s\S]*?-->|<\?xml[^>]*>)*/, '').slice(0, 512).toLowerCase();
  return /^<(?:!doctype\s+html|html|head|body)[\s>]/.test(start);
}

/** An OLE2 compound file: legacy Office (.doc, .xls, .ppt) or an encrypted OOXML package. */
export function isOle2(bytes: Uint8Array): boolean {
  return OLE2.every((b, i) => bytes[i] === b);
}

export function containsUtf16(bytes: Uint8Array, text: string): boolean {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes(Buffer.from(text, 'utf16le'));
}

interface BinaryFormat {
  /** Named in the failure reason: "not a valid PDF". */
  label: string;
  /** What the file is queued as when its bytes do not match; null for a format Folio does not read. */
  format: DocumentFormat | null;
  extension: RegExp;
  type: RegExp;
  /** Whether the bytes carry the format's signature. */
  signed: (bytes: Uint8Array) => boolean;
}

// Any readable image passes for any image type: a PNG named .jpg is common and read all the same.
const isImage = (bytes: Uint8Array) => imageKind(bytes) !== null;

const BINARY_FORMATS: readonly BinaryFormat[] = [
  { label: 'PDF', format: 'pdf', extension: /\.pdf$/i, type: /^application\/(?:x-)?pdf$|^application\/acrobat$/, signed: (b) => findPdfHeader(b) >= 0 },
  // A broken ZIP or an OLE2 container (encrypted package, legacy .doc) is left to detection.
  { label: 'DOCX', format: 'docx', extension: DOCX_EXT, type: DOCX_TYPE, signed: (b) => isZip(b) || isOle2(b) },
  { label: 'PNG image', format: 'image', extension: /\.a?png$/i, type: /^image\/a?png$/, signed: isImage },
  { label: 'JPEG image', format: 'image', extension: /\.(?:jpe?g|jpe|jfif)$/i, type: /^image\/p?jpe?g$/, signed: isImage },
  { label: 'TIFF image', format: 'image', extension: /\.tiff?$/i, type: /^image\/tiff$/, signed: isImage },
  { label: 'WebP image', format: 'image', extension: /\.webp$/i, type: /^image\/webp$/, signed: isImage },
  { label: 'DOC file', format: null, extension: /\.(?:doc|dot)$/i, type: /^application\/msword$/, signed: isOle2 },
  { label: 'XLS workbook', format: null, extension: /\.xls$/i, type: /^application\/vnd\.ms-excel$/, signed: isOle2 },
  { label: 'PPT presentation', format: null, extension: /\.(?:ppt|pps)$/i, type: /^application\/vnd\.ms-powerpoint$/, signed: isOle2 },
  { label: 'XLSX workbook', format: null, extension: /\.(?:xlsx|xlsm)$/i, type: /spreadsheetml|^application\/vnd\.ms-excel\.sheet\.macroenabled/, signed: isZip },
  { label: 'PPTX presentation', format: null, extension: /\.(?:pptx|pptm|ppsx)$/i, type: /presentationml|^application\/vnd\.ms-powerpoint\.presentation\.macroenabled/, signed: isZip },
];

const TEXT_TYPE = /^text\/|^application\/(?:xhtml\+xml|xml|json)$/;

const IMAGE_LABELS: Record<ImageKind, string> = { png: 'PNG', jpeg: 'JPEG', webp: 'WebP', tiff: 'TIFF' };

export interface FormatMismatch {
  /** What the upload is queued as, so that its task fails with the reason; null: refused as unsupported. */
  format: DocumentFormat | null;
  /** Completes "<name> is …": "not a valid PDF: it is declared as application/pdf, but its content is text". */
  reason: string;
}

/**
 * The binary format a file declares and its bytes lack, or null. A declared content type that
 * names a format (binary or text) is the more deliberate statement and wins over the name's
 * extension; a generic or absent type (application/octet-stream) leaves it to the extension.
 */
export function declaredFormatMismatch(bytes: Uint8Array, filename?: string | null, contentType?: string | null): FormatMismatch | null {
  const name = (filename ?? '').trim();
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  const byType = BINARY_FORMATS.find((f) => f.type.test(type));
  if (!byType && TEXT_TYPE.test(type)) return null;
  const declared = byType ?? BINARY_FORMATS.find((f) => f.extension.test(name));
  if (!declared || declared.signed(bytes)) return null;
  const how = byType ? `declared as ${type}` : `named ${name.slice(name.lastIndexOf('.'))}`;
  return { format: declared.format, reason: `not a valid ${declared.label}: it is ${how}, but its content is ${describeContent(bytes)}` };
}

/** The format an upload is queued as: what its bytes hold, or the binary format it declares in vain (its task then fails saying so). */
export function resolveFormat(bytes: Uint8Array, filename?: string | null, contentType?: string | null): DocumentFormat | null {
  return detectFormat(bytes, filename, contentType) ?? declaredFormatMismatch(bytes, filename, contentType)?.format ?? null;
}

/** What the bytes hold, in words, for a failure reason. */
function describeContent(bytes: Uint8Array): string {
  const kind = imageKind(bytes);
  if (kind) return `a ${IMAGE_LABELS[kind]} image`;
  switch (detectFormat(bytes)) {
    case 'pdf':
      return 'a PDF';
    case 'docx':
      return 'a DOCX document';
    case 'html':
      return 'an HTML page';
    case 'markdown':
    case 'text':
      return 'text';
    default:
      return isZip(bytes) ? 'a ZIP archive' : isOle2(bytes) ? 'a legacy Office file' : 'binary data';
  }
}
