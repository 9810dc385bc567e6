// A paragraph's stored text: NULL when it is its sentences joined by single spaces, as most prose
// is, since the sentences hold it already (migration 0016). Free of the database client, so that
// the embedded engine's packing (embedded-batch.ts) can use it.

/** The content to store: null when the sentences give it back (an empty text is kept: there is nothing to save). */
export function storedParagraphContent(paragraph: { content: string; sentences: readonly string[] }): string | null {
  return paragraph.content !== '' && paragraph.content === paragraph.sentences.join(' ') ? null : paragraph.content;
}

/** A stored paragraph's text. */
export function paragraphContent(stored: string | null, sentences: readonly string[]): string {
  return stored ?? sentences.join(' ');
}
