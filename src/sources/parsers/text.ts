// Plain text and Markdown: decode, keep the text, cut it into pages.

import { decodeText, looksLikeText } from './encoding.js';
import { paginate, sanitize, tidy } from './text-utils.js';
import { ParseError, type ParsedDocument } from './types.js';

export function parseText(bytes: Uint8Array): ParsedDocument {
  return { format: 'text', pages: paginate(tidy(sanitize(decodeTextFile(bytes)))), title: null };
}

export function parseMarkdown(bytes: Uint8Array): ParsedDocument {
  const source = tidy(sanitize(decodeTextFile(bytes)));
  return { format: 'markdown', pages: paginate(tidy(stripMarkdownNoise(source))), title: markdownTitle(source) };
}

function decodeTextFile(bytes: Uint8Array): string {
  if (!looksLikeText(bytes)) {
    throw new ParseError('This is not a text file: it contains binary data (NUL or control bytes)');
  }
  return decodeText(bytes).text;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * Removes syntax that only adds noise to search: link targets ([text](url) keeps text),
 * images (their alt text stays), HTML comments and reference-link definitions. Headings,
 * lists, emphasis and code are left as written. Code blocks are never touched.
 */
export function stripMarkdownNoise(markdown: string): string {
  const labels = referenceLabels(markdown);
  const out: string[] = [];
  let fence: string | null = null;
  let prose: string[] = [];
  const flush = () => {
    if (prose.length) out.push(stripInline(prose.join('\n'), labels));
    prose = [];
  };
  for (const line of markdown.split('\n')) {
    const marker = FENCE.exec(line)?.[1];
    if (fence) {
      out.push(line);
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = null;
    } else if (marker) {
      flush();
      out.push(line);
      fence = marker;
    } else {
      prose.push(line);
    }
  }
  flush();
  return out.join('\n');
}

const DEFINITION = /^ {0,3}\[([^\]\n]+)\]:[ \t]*\S+/gm;
const labelKey = (label: string) => label.replace(/\s+/g, ' ').trim().toLowerCase();

/** The labels of reference-link definitions ("[label]: url"). */
function referenceLabels(markdown: string): Set<string> {
  return new Set(Array.from(markdown.matchAll(DEFINITION), (m) => labelKey(m[1])));
}

// Link and image texts hold no bracket: tried from each "[" of a line of thousands with no
// "]", a text that may hold "[" would be scanned to the line's end each time.
function stripInline(text: string, labels: Set<string> = new Set()): string {
  const stripped = stripComments(text)
    .replace(/^ {0,3}\[[^\]\n]+\]:\s*\S+(?:\s+(?:"[^"\n]*"|'[^'\n]*'|\([^)\n]*\)))?[ \t]*$/gm, '')
    .replace(/!\[([^[\]\n]*)\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+"[^"\n]*")?\)/g, '$1')
    .replace(/!\[([^[\]\n]*)\]\[[^[\]\n]*\]/g, '$1')
    .replace(/\[([^[\]\n]+)\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+"[^"\n]*")?\)/g, '$1')
    .replace(/\[([^[\]\n]+)\]\[[^[\]\n]*\]/g, '$1');
  if (labels.size === 0) return stripped;
  // Shortcut references ("[Haskell]") only where the label is defined, so that "[x]" or "[1]" stay.
  return stripped.replace(/\[([^[\]\n]+)\](?![(:[])/g, (all, label: string) => (labels.has(labelKey(label)) ? label : all));
}

/** Without HTML comments; one left open stays (a regex would look for its end from every "<!--"). */
function stripComments(text: string): string {
  const kept: string[] = [];
  let from = 0;
  for (let open = text.indexOf('<!--'); open >= 0; open = text.indexOf('<!--', from)) {
    const close = text.indexOf('-->', open + 4);
    if (close < 0) break;
    kept.push(text.slice(from, open));
    from = close + 3;
  }
  kept.push(text.slice(from));
  return kept.join('');
}

/** A `title:` in YAML front matter, else the first level-1 heading (ATX or setext). */
export function markdownTitle(markdown: string): string | null {
  const front = /^---[ \t]*\n([\s\S]*?)\n(?:---|\.\.\.)[ \t]*(?:\n|$)/.exec(markdown);
  const yamlTitle = front && /^title:[ \t]*(.+)$/m.exec(front[1])?.[1].trim().replace(/^(["'])(.*)\1$/, '$2');
  if (yamlTitle) return clean(yamlTitle);
  let fence: string | null = null;
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const marker = FENCE.exec(lines[i])?.[1];
    if (marker) {
      if (!fence) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = null;
      continue;
    }
    if (fence) continue;
    const atx = /^ {0,3}#[ \t]+(.+)$/.exec(lines[i]);
    if (atx) return clean(atxText(atx[1]));
    if (i > 0 && /^ {0,3}=+[ \t]*$/.test(lines[i]) && lines[i - 1].trim() && !/^\s*(?:[-*+]|\d+\.)\s/.test(lines[i - 1])) {
      return clean(lines[i - 1]);
    }
  }
  return null;
}

/**
 * A heading's text without its closing "#"s and trailing blanks. Runs of blanks are matched
 * from their start only, so that a long run inside the heading costs its length, not its square.
 */
function atxText(heading: string): string {
  return heading.replace(/(?<![ \t])[ \t]+$/, '').replace(/(?<=[^ \t])[ \t]+#+$/, '');
}

function clean(title: string): string | null {
  const text = stripInline(title).replace(/[*_`]+/g, '').replace(/\s+/g, ' ').trim();
  return text || null;
}
