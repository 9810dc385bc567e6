// OCR benchmark: the scanned PDFs of the test corpus through ParserPool with OCR on (the
// path ingestion takes: render on a parser thread, recognise on the pool's Tesseract threads),
// pages per second and CPU per page, and the character error rate where the corpus holds
// reference OCR text (linn.pdf and skew.pdf, against linn.reference-ocr.txt). Then the cost of
// the orientation check: the linn page upright and turned upside down.
//
//   npx tsx bench/ocr/run.ts [--threads 1,2] [--files linn.pdf,skew.pdf] [--no-orientation]

import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { OcrEngine } from '../../src/sources/ocr/engine.js';
import { recognisePage } from '../../src/sources/ocr/page.js';
import { NapiCanvasFactory, renderPage } from '../../src/sources/ocr/pdf-render.js';
import { rotate } from '../../src/sources/ocr/raster.js';
import { ParserPool } from '../../src/sources/parsers/index.js';
import { characterErrorRate } from './cer.js';

const CORPUS = path.resolve(import.meta.dirname, '../../test/fixtures/corpus/docs');
const SCANNED = path.join(CORPUS, 'pdf/scanned');
const REFERENCE: Record<string, string> = {
  'linn.pdf': 'ground_truth/pdf/linn.reference-ocr.txt',
  'skew.pdf': 'ground_truth/pdf/linn.reference-ocr.txt',
};

const { values } = parseArgs({
  options: {
    threads: { type: 'string', default: '1' },
    files: { type: 'string' },
    'no-orientation': { type: 'boolean', default: false },
  },
});

const files = values.files ? values.files.split(',') : fs.readdirSync(SCANNED).filter((f) => f.endsWith('.pdf')).sort();
const threadCounts = values.threads.split(',').map(Number);

/** CPU seconds of this process, all threads (parser workers and Tesseract workers included). */
function cpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

function pad(s: string | number, n: number): string {
  return String(s).padStart(n);
}

console.log(`OCR benchmark: ${files.length} scanned PDFs from ${SCANNED}`);
console.log(`machine: ${(await import('node:os')).cpus().length} cores, load average ${(await import('node:os')).loadavg().map((l) => l.toFixed(1)).join(' ')}`);

for (const threads of threadCounts) {
  const pool = new ParserPool({ threads: 1, timeoutMs: 0, ocr: { threads } });
  // Start the Tesseract workers before timing (a one-page image): start-up is reported apart.
  const warm = performance.now();
  const { createCanvas } = await import('@napi-rs/canvas');
  const canvas = createCanvas(400, 100);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, 400, 100);
  ctx.fillStyle = '#000';
  ctx.font = '40px sans-serif';
  ctx.fillText('warm up', 20, 60);
  await Promise.all(Array.from({ length: threads }, async () => pool.parse(new Uint8Array(await canvas.encode('png')), 'image')));
  console.log(`\n== OCR threads: ${threads} (one parser thread); workers started in ${((performance.now() - warm) / 1000).toFixed(1)} s`);
  console.log(`${'file'.padEnd(32)} ${pad('pages', 5)} ${pad('ocr', 4)} ${pad('wall s', 7)} ${pad('cpu s', 6)} ${pad('ocr p/s', 8)} ${pad('chars', 6)} ${pad('CER', 7)}`);
  let totalPages = 0;
  let totalWall = 0;
  let totalCpu = 0;
  for (const file of files) {
    const bytes = new Uint8Array(fs.readFileSync(path.join(SCANNED, file)));
    const t0 = performance.now();
    const c0 = cpuSeconds();
    let line: string;
    try {
      const doc = await pool.parse(bytes, 'pdf');
      const wall = (performance.now() - t0) / 1000;
      const cpu = cpuSeconds() - c0;
      const ocrPages = doc.ocrPages?.length ?? 0;
      totalPages += ocrPages;
      totalWall += wall;
      totalCpu += cpu;
      const text = doc.pages.join('\n\n');
      const ref = REFERENCE[file] ? fs.readFileSync(path.join(CORPUS, REFERENCE[file]), 'utf8') : null;
      const cer = ref ? (100 * characterErrorRate(text, ref)).toFixed(2) + '%' : '-';
      line = `${file.padEnd(32)} ${pad(doc.pages.length, 5)} ${pad(ocrPages, 4)} ${pad(wall.toFixed(1), 7)} ${pad(cpu.toFixed(1), 6)} ${pad(ocrPages ? (ocrPages / wall).toFixed(3) : '-', 8)} ${pad(text.length, 6)} ${pad(cer, 7)}`;
    } catch (err) {
      const wall = (performance.now() - t0) / 1000;
      totalWall += wall;
      totalCpu += cpuSeconds() - c0;
      line = `${file.padEnd(32)} failed after ${wall.toFixed(1)} s: ${(err as Error).message}`;
    }
    console.log(line);
  }
  console.log(
    `${'all'.padEnd(32)} ${pad('', 5)} ${pad(totalPages, 4)} ${pad(totalWall.toFixed(1), 7)} ${pad(totalCpu.toFixed(1), 6)} ${pad((totalPages / totalWall).toFixed(3), 8)}   (${(totalCpu / Math.max(1, totalPages)).toFixed(1)} cpu s per OCR page)`,
  );
  await pool.close();
}

if (!values['no-orientation']) {
  // The orientation check runs only when the first reading is poor (mean confidence below 70
  // or hardly any sure words): an upright page pays nothing, an upside-down one pays a first
  // reading, four readings of the page's centre, and the reading of the turned page.
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const doc = await pdfjs.getDocument({
    data: new Uint8Array(fs.readFileSync(path.join(SCANNED, 'linn.pdf'))),
    CanvasFactory: NapiCanvasFactory,
    wasmUrl: path.join(path.dirname(import.meta.dirname), '../node_modules/pdfjs-dist/wasm/'),
    verbosity: 0,
  }).promise;
  const { image, dpi } = await renderPage(await doc.getPage(1));
  await doc.destroy();
  const engine = new OcrEngine({ threads: 1 });
  await engine.recognize(new Uint8Array(Buffer.from('P5\n8 8\n255\n' + '\xff'.repeat(64), 'latin1')));
  const ref = fs.readFileSync(path.join(CORPUS, REFERENCE['linn.pdf']), 'utf8');
  console.log('\n== orientation check (linn.pdf page, 300 dpi, one OCR thread)');
  for (const turn of [0, 180, 90, 270] as const) {
    const t0 = performance.now();
    const c0 = cpuSeconds();
    const page = await recognisePage(engine, rotate(image, turn), { dpi });
    console.log(
      `turned ${pad(turn, 3)}: read in ${pad(((performance.now() - t0) / 1000).toFixed(1), 5)} s (${(cpuSeconds() - c0).toFixed(1)} cpu s), turned back by ${pad(page.rotation, 3)}, confidence ${page.confidence}, CER ${(100 * characterErrorRate(page.text, ref)).toFixed(2)}%`,
    );
  }
  await engine.close();
}
