// Recognition languages: each is an npm package (@tesseract.js-data/<code>) holding the
// trained data, read from disk; nothing is ever downloaded.

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

const CODE = /^[a-z]{3}(?:_[a-z]+)*$/i;
// LSTM-only data first: a quarter of the size of the combined one (faster to load), same text.
const DATA_FOLDERS = ['4.0.0_best_int', '4.0.0'];

/** "eng", "eng+deu" or "eng, deu" as a list of language codes. */
export function parseLanguages(raw: string | readonly string[]): string[] {
  const list = (typeof raw === 'string' ? raw.split(/[+,\s]+/) : [...raw]).map((c) => c.trim()).filter((c) => c !== '');
  if (list.length === 0) throw new RangeError('OCR needs at least one language');
  for (const code of list) {
    if (!CODE.test(code)) throw new RangeError(`"${code}" is not an OCR language code (such as eng, deu, chi_sim)`);
  }
  return [...new Set(list)];
}

export interface LanguageData {
  /** Language codes joined the way Tesseract takes them ("eng+deu"). */
  langs: string;
  /** One folder holding <code>.traineddata.gz for every language. */
  langPath: string;
}

/** Where the trained data of the languages lies; throws, naming the package to add, when one is missing. */
export function languageData(codes: readonly string[]): LanguageData {
  const key = codes.join('+');
  const require = createRequire(import.meta.url);
  const files = codes.map((code) => {
    let root: string;
    try {
      root = path.dirname(require.resolve(`@tesseract.js-data/${code}/package.json`));
    } catch {
      throw new Error(`OCR language "${code}" is not installed: add the npm package @tesseract.js-data/${code}`);
    }
    for (const folder of DATA_FOLDERS) {
      const file = path.join(root, folder, `${code}.traineddata.gz`);
      if (fs.existsSync(file)) return file;
    }
    throw new Error(`OCR language "${code}": no ${code}.traineddata.gz found in ${root}`);
  });
  const folders = new Set(files.map((f) => path.dirname(f)));
  let langPath: string;
  if (folders.size === 1) {
    langPath = [...folders][0];
  } else {
    // Tesseract reads every language from one folder: link the packages' files into one.
    const hash = createHash('sha256').update(files.join('\n')).digest('hex').slice(0, 16);
    langPath = path.join(os.tmpdir(), `folio-ocr-langs-${hash}`);
    fs.mkdirSync(langPath, { recursive: true });
    for (const file of files) {
      const link = path.join(langPath, path.basename(file));
      if (!fs.existsSync(link)) {
        try {
          fs.symlinkSync(file, link);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        }
      }
    }
  }
  return { langs: key, langPath };
}
