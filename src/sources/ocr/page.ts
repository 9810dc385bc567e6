// One page image to text. Blank pages are skipped without recognition. The first pass reads
// the page as it stands, letting Tesseract straighten a slight skew. A page that reads badly
// may be turned: then the centre of the page is read at each quarter turn, and the turn whose
// words Tesseract is surest of wins, if it beats the upright reading clearly; the whole page
// is then read again turned. Words Tesseract barely believes in (specks, pictures read as
// letters) are left out of the text.

import { crop, isBlank, rotate, shrink, toPgm, type GrayImage, type Rotation } from './raster.js';
import type { OcrResult, OcrService, OcrWord } from './types.js';

export interface PageText {
  text: string;
  /** Mean word confidence of the reading kept (0-100); 0 for a blank page. */
  confidence: number;
  /** Clockwise quarter turn applied before the reading kept. */
  rotation: Rotation;
  /** Whether the image had anything to read (false: blank, recognition skipped). */
  recognised: boolean;
}

export interface PageOptions {
  /** Resolution of the image, when known (a rendered PDF page); Tesseract estimates it otherwise. */
  dpi?: number;
}

/** Below this mean confidence a reading is suspect, and the other orientations are tried. */
export const ORIENTATION_CHECK_BELOW = 70;
/** A probe of the page's centre scoring this much (sure letters) reads well. */
const GOOD_PROBE = 40;
/** Confidence a word needs to vouch for its line (see credible). */
const NOISE_CONFIDENCE = 40;

export async function recognisePage(ocr: OcrService, img: GrayImage, opts: PageOptions = {}): Promise<PageText> {
  if (isBlank(img)) return { text: '', confidence: 0, rotation: 0, recognised: false };
  const first = await ocr.recognize(toPgm(img), { dpi: opts.dpi, deskew: true });
  let best: { result: OcrResult; rotation: Rotation } = { result: first, rotation: 0 };
  if (readsBadly(first)) {
    const turn = await detectOrientation(ocr, img, opts.dpi);
    if (turn !== 0) {
      const turned = await ocr.recognize(toPgm(rotate(img, turn)), { dpi: opts.dpi, deskew: true });
      if (score(turned.words) > score(first.words)) best = { result: turned, rotation: turn };
    }
  }
  return { text: wordsToText(best.result.words), confidence: best.result.confidence, rotation: best.rotation, recognised: true };
}

/** A reading worth a second look: low confidence, or hardly any believable words. */
function readsBadly(result: OcrResult): boolean {
  return result.confidence < ORIENTATION_CHECK_BELOW || score(result.words) < 20;
}

/**
 * The quarter turn that makes the page upright, from readings of the centre of the page (a
 * square half the page's width, at about 150 dpi). Tesseract itself reads text lying a
 * quarter turn clockwise (it finds vertical lines and turns them), so a page lying the other
 * way needs only a half turn to become one it reads: 0 and 180 degrees are tried first, and 90
 * and 270 only when neither reads well. A turn must score at least twice the upright reading.
 */
export async function detectOrientation(ocr: OcrService, img: GrayImage, dpi?: number): Promise<Rotation> {
  const factor = dpi && dpi > 200 ? Math.floor(dpi / 150) : 1;
  const small = shrink(img, factor);
  const shorter = Math.min(small.width, small.height);
  const side = Math.min(shorter, Math.max(500, Math.round(0.5 * shorter)));
  const centre = crop(small, (small.width - side) / 2, (small.height - side) / 2, side, side);
  const probeDpi = dpi ? dpi / factor : undefined;
  const scores = new Map<Rotation, number>();
  const probe = async (turns: Rotation[]) => {
    for (const turn of turns) scores.set(turn, score((await ocr.recognize(toPgm(rotate(centre, turn)), { dpi: probeDpi })).words));
  };
  const best = (): Rotation => [...scores.keys()].reduce((a, b) => (scores.get(b)! > scores.get(a)! ? b : a));
  const upright = () => scores.get(0)!;
  const wins = (turn: Rotation) => turn !== 0 && scores.get(turn)! >= Math.max(GOOD_PROBE / 2, 2 * upright());
  await probe([0, 180]);
  if (wins(best()) || scores.get(best())! >= GOOD_PROBE) return wins(best()) ? best() : 0;
  await probe([90, 270]);
  return wins(best()) ? best() : 0;
}

/** Letters and digits in words Tesseract is fairly sure of: what a right-way-up page has many of. */
export function score(words: OcrWord[]): number {
  let total = 0;
  for (const w of words) {
    if (w.conf < 60) continue;
    const alnum = w.text.match(/[\p{L}\p{N}]/gu)?.length ?? 0;
    if (alnum >= 2) total += alnum;
  }
  return total;
}

/** A word Tesseract believes in: two letters or digits read with some confidence, or a sure reading. */
function credible(w: OcrWord): boolean {
  return w.conf >= 80 || (w.conf >= NOISE_CONFIDENCE && /[\p{L}\p{N}].*[\p{L}\p{N}]/u.test(w.text));
}

/**
 * Text from words: words of a line joined by spaces, lines by newlines, paragraphs by blank
 * lines. A line without a single credible word is noise (a picture, specks, a rule read as
 * letters) and is left out; within a kept line every word stays, since real words can score
 * low ("couldnt" in an old typeface).
 */
export function wordsToText(words: OcrWord[]): string {
  const paragraphs: OcrWord[][][] = [];
  let parKey = '';
  let lineKey = '';
  for (const w of words) {
    const key = `${w.block}/${w.par}`;
    if (key !== parKey) {
      parKey = key;
      lineKey = '';
      paragraphs.push([]);
    }
    const lines = paragraphs[paragraphs.length - 1];
    if (`${key}/${w.line}` !== lineKey) {
      lineKey = `${key}/${w.line}`;
      lines.push([]);
    }
    lines[lines.length - 1].push(w);
  }
  return paragraphs
    .map((lines) =>
      lines
        .filter((line) => line.some(credible))
        .map((line) => line.map((w) => w.text).join(' '))
        .join('\n'),
    )
    .filter((p) => p !== '')
    .join('\n\n');
}
