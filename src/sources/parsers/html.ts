// HTML: the main content (Readability), else the body without its page chrome, as text.
// Nesting deeper than MAX_HTML_DEPTH is flattened first (html-depth.ts).

import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { bomEncoding, decodeText } from './encoding.js';
import { flattenHtml, nestingWork } from './html-depth.js';
import { htmlToText } from './html-text.js';
import { paginate, sanitize, tidy } from './text-utils.js';
import type { ParsedDocument } from './types.js';

// Readability's pick is trusted when it holds this much text, or a good share of the body's.
const MIN_ARTICLE_CHARS = 200;
const MIN_ARTICLE_SHARE = 0.5;
// Past this nesting work (html-depth.ts) Readability would take seconds (1e7: 0.5-1 s, 35 times
// a long Wikipedia article's); the body's text is read instead.
const MAX_READABILITY_WORK = 1e7;

const CHROME =
  'nav, header, footer, aside, script, style, noscript, form, [role="navigation"], [role="banner"], ' +
  '[role="contentinfo"], [role="search"], [aria-hidden="true"]';

export function parseHtml(bytes: Uint8Array): ParsedDocument {
  let html = decodeHtml(bytes);
  // linkedom builds no implicit <html>/<body> around a bare fragment: add them.
  if (!/<(?:html|head|body)[\s>]/i.test(html)) html = `<!DOCTYPE html><html><head></head><body>${html}</body></html>`;
  html = flattenHtml(html).html;
  const { document } = parseHTML(html);
  const pageTitle = cleanTitle(document.title);
  let article: { title?: string | null; content?: string | null; textContent?: string | null } | null = null;
  if (document.documentElement && nestingWork(document.documentElement, MAX_READABILITY_WORK) <= MAX_READABILITY_WORK) {
    try {
      article = new Readability(document).parse();
    } catch {
      article = null; // Readability gives up on some odd documents: the fallback below takes over
    }
  }
  let text = '';
  if (article?.content) text = tidy(htmlToText(parseHTML(`<!DOCTYPE html><html><body>${article.content}</body></html>`).document.body));
  if (text.length < MIN_ARTICLE_CHARS) {
    const body = tidy(bodyText(html));
    if (text.length < MIN_ARTICLE_SHARE * body.length) text = body;
  }
  const title = cleanTitle(article?.title) ?? pageTitle;
  return { format: 'html', pages: paginate(sanitize(text)), title: title ? sanitize(title) : null };
}

/** The body's text without navigation, header, footer, asides and scripts. */
function bodyText(html: string): string {
  const { document } = parseHTML(html);
  const root = document.body ?? document.documentElement;
  if (!root) return '';
  for (const el of Array.from(root.querySelectorAll(CHROME))) el.remove();
  return htmlToText(root);
}

function cleanTitle(title: string | null | undefined): string | null {
  const text = (title ?? '').replace(/\s+/g, ' ').trim();
  return text || null;
}

/**
 * HTML bytes as a string: a BOM wins, then a charset in a <meta> near the start, else UTF-8
 * (windows-1252 when the bytes are not valid UTF-8).
 */
export function decodeHtml(bytes: Uint8Array): string {
  if (bomEncoding(bytes)) return decodeText(bytes).text;
  let declared = metaCharset(bytes);
  // A document that got this far as bytes is ASCII-compatible: a UTF-16 label is wrong (HTML spec).
  if (declared && /^utf-?16/i.test(declared)) declared = 'utf-8';
  return decodeText(bytes, declared).text;
}

function metaCharset(bytes: Uint8Array): string | null {
  const head = new TextDecoder('latin1').decode(bytes.subarray(0, 4096));
  for (const tag of head.match(/<meta\b[^>]*>/gi) ?? []) {
    const charset = /\bcharset\s*=\s*["']?\s*([\w.:-]+)/i.exec(tag)?.[1];
    if (charset) return charset;
  }
  return null;
}
