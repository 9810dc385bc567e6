// The test corpus copied into the repository (test/fixtures/corpus; see its README for
// sources and licences), so that tests never depend on anything outside the checkout.
import fs from 'node:fs';
import path from 'node:path';

/** The corpus root: MANIFEST.md and docs/. */
export const CORPUS_ROOT = path.resolve(import.meta.dirname, '../fixtures/corpus');

/** The documents, ground truth and manifest.json. */
export const CORPUS_DOCS = path.join(CORPUS_ROOT, 'docs');

/** The bytes of one corpus document, by its path under docs/ (e.g. `pdf/text/bitcoin.pdf`). */
export function corpusFile(rel: string): Buffer<ArrayBuffer> {
  return fs.readFileSync(path.join(CORPUS_DOCS, rel));
}
