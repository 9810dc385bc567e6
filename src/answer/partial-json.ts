// Reads one string field of a JSON object while the object's text is still arriving: a
// model's structured reply streams as JSON text, and the answer inside it can be shown as it
// is written. Decodes escapes split across pieces; ignores what precedes the first `{` (a
// Markdown fence). The whole text is still parsed and validated once complete.

const ESCAPES: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

export class PartialJsonField {
  /** The object's top-level literals (true, false, null, numbers) completed so far, by key, as written. */
  readonly literals = new Map<string, string>();
  private started = false;
  private finished = false;
  private depth = 0;
  private expectKey = false;
  private key = '';
  private inString = false;
  /** What the current string is: a top-level key, the wanted field's value, or neither. */
  private role: 'key' | 'value' | 'other' = 'other';
  private escape = false;
  private unicode: string | null = null;
  private literal = '';
  private text = '';
  /** A high surrogate from a \u escape, kept until its low half arrives. */
  private pendingHigh = '';

  constructor(
    private readonly field: string,
    private readonly onText: (text: string) => void,
  ) {}

  /** The next piece of the object's text; the field's text it completes is told at once. */
  push(piece: string): void {
    for (const c of piece) this.char(c);
    if (this.text === '') return;
    let text = this.pendingHigh + this.text;
    this.text = '';
    this.pendingHigh = '';
    const last = text.charCodeAt(text.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      this.pendingHigh = text.slice(-1);
      text = text.slice(0, -1);
    }
    if (text !== '') this.onText(text);
  }

  private char(c: string): void {
    if (this.finished) return;
    if (!this.started) {
      if (c === '{') {
        this.started = true;
        this.depth = 1;
        this.expectKey = true;
      }
      return;
    }
    if (this.inString) return this.stringChar(c);
    if (this.depth === 1 && this.literal !== '' && /[\s,}\]]/.test(c)) {
      this.literals.set(this.key, this.literal);
      this.literal = '';
    }
    switch (c) {
      case '"':
        this.inString = true;
        this.role = this.depth !== 1 ? 'other' : this.expectKey ? 'key' : this.key === this.field ? 'value' : 'other';
        if (this.role === 'key') this.key = '';
        return;
      case '{':
      case '[':
        this.depth++;
        return;
      case '}':
      case ']':
        if (--this.depth === 0) this.finished = true;
        return;
      case ',':
        if (this.depth === 1) this.expectKey = true;
        return;
      case ':':
        if (this.depth === 1) this.expectKey = false;
        return;
      default:
        if (this.depth === 1 && !this.expectKey && !/\s/.test(c)) this.literal += c;
    }
  }

  private stringChar(c: string): void {
    if (this.unicode !== null) {
      this.unicode += c;
      if (this.unicode.length === 4) {
        const code = Number.parseInt(this.unicode, 16);
        this.unicode = null;
        if (!Number.isNaN(code)) this.decoded(String.fromCharCode(code));
      }
    } else if (this.escape) {
      this.escape = false;
      if (c === 'u') this.unicode = '';
      else this.decoded(ESCAPES[c] ?? c);
    } else if (c === '\\') {
      this.escape = true;
    } else if (c === '"') {
      this.inString = false;
    } else {
      this.decoded(c);
    }
  }

  private decoded(c: string): void {
    if (this.role === 'key') this.key += c;
    else if (this.role === 'value') this.text += c;
  }
}
