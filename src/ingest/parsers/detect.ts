// Format detection from the bytes. The file name and the declared content type are hints that
// only choose between formats the bytes allow (markdown or plain text, a ZIP that claims to be
// a DOCX); they never make a binary file text or a text file a PDF.

import { imageKind } from '../ocr/image.js';
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
