// How deeply the elements of an XML text nest, found in one pass without parsing it: what
// a caller must know before handing the text to a parser that recurses once per element.

const LT = 0x3c;
const GT = 0x3e;
const SLASH = 0x2f;
const BANG = 0x21;
const QUESTION = 0x3f;
const QUOTE = 0x22;
const APOSTROPHE = 0x27;

/** The deepest nesting of elements in `xml` (the root element alone is 1). */
export function xmlDepth(xml: string): number {
  let depth = 0;
  let deepest = 0;
  for (let at = xml.indexOf('<'); at >= 0; at = xml.indexOf('<', at + 1)) {
    const next = xml.charCodeAt(at + 1);
    let end: number;
    if (next === SLASH) {
      depth--;
      end = xml.indexOf('>', at);
    } else if (next === BANG) {
      // A comment or CDATA section may hold tags; a DOCTYPE's internal subset is not followed.
      if (xml.startsWith('<!--', at)) end = endOf(xml, '-->', at + 4);
      else if (xml.startsWith('<![CDATA[', at)) end = endOf(xml, ']]>', at + 9);
      else end = xml.indexOf('>', at);
    } else if (next === QUESTION) {
      end = endOf(xml, '?>', at + 2);
    } else {
      end = tagEnd(xml, at);
      if (end > 0 && xml.charCodeAt(end - 1) !== SLASH) deepest = Math.max(deepest, ++depth);
    }
    if (end < 0) break;
    at = end;
  }
  return deepest;
}

/** The index of the last character of `close` found from `from`, or -1. */
function endOf(xml: string, close: string, from: number): number {
  const at = xml.indexOf(close, from);
  return at < 0 ? -1 : at + close.length - 1;
}

/**
 * The index of the `>` that ends the start tag at `from` (a quoted attribute value may hold
 * one), or -1. A `<` inside is not well-formed: the tag is taken to end before it.
 */
function tagEnd(xml: string, from: number): number {
  let quote = 0;
  for (let i = from + 1; i < xml.length; i++) {
    const c = xml.charCodeAt(i);
    if (c === LT) return i - 1;
    if (quote) {
      if (c === quote) quote = 0;
    } else if (c === QUOTE || c === APOSTROPHE) {
      quote = c;
    } else if (c === GT) {
      return i;
    }
  }
  return -1;
}
