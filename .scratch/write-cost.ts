// In-process cost of the embedding-ingest write path on PGlite (no HTTP).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore, migrateToLatest } from '../src/store/engine.js';
import { ensureWorkspace } from '../src/store/workspaces.js';
import { EmbeddingIngester } from '../src/documents/ingest-embedding.js';

const WORDS = 'the a report quarterly revenue customer contract service team project data system review policy market growth product release support network security update budget analysis risk delivery schedule invoice account region office manager engineer partner agreement storage performance quality request change meeting plan results increase decrease shows includes requires describes confirms expects improved delayed approved final annual new current our their with for from after before during under across within'.split(' ');
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)];
function sentence(): string {
  const words = Array.from({ length: 8 + Math.floor(Math.random() * 12) }, () => pick(WORDS));
  if (Math.random() < 0.3) words.splice(4, 0, `${(Math.random() * 100).toFixed(1)}%,`);
  const text = words.join(' ');
  return text[0].toUpperCase() + text.slice(1) + pick(['.', '.', '.', '?', '!']);
}
function content(): string {
  const target = 1000 + Math.random() * 1000;
  const paragraphs: string[] = [];
  while (paragraphs.join('\n\n').length < target) paragraphs.push(Array.from({ length: 3 + Math.floor(Math.random() * 3) }, sentence).join(' '));
  return paragraphs.join('\n\n').slice(0, 2900);
}
const engine = process.argv[2] ?? 'pglite';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wc-'));
const store = await openStore(engine === 'pglite' ? { dataDir: dir } : { databaseUrl: 'postgres://postgres@127.0.0.1:5432/test' });
await migrateToLatest(store.db);
const ws = await ensureWorkspace(store.db, 'bench-' + Date.now());
const ingester = new EmbeddingIngester(store.db, 1);
const docs = Array.from({ length: 256 }, () => ({ embedding: Array.from({ length: 1536 }, () => Math.random() * 2 - 1), content: content(), metadata: { a: 1, tags: ['x'] } }));
for (const size of [8, 64, 8, 64]) {
  const total = 2048;
  const t0 = performance.now();
  for (let done = 0; done < total; done += size) {
    await Promise.all(Array.from({ length: size }, (_, i) => ingester.ingest(ws, { ...docs[(done + i) % docs.length], external_id: i % 2 ? `e${done + i}` : null })));
  }
  const ms = performance.now() - t0;
  console.log(`batch ${size}: ${(ms / total).toFixed(3)} ms/doc, ${Math.round(total / (ms / 1000))}/s`);
}
await store.close();
fs.rmSync(dir, { recursive: true, force: true });
