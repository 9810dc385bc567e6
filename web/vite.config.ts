// Builds the console into dist/console, which src/http/console.ts serves at /console/.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  // The typed client from its source: the console needs no build of it first.
  resolve: { alias: { '@folio/client': fileURLToPath(new URL('../clients/typescript/src/index.ts', import.meta.url)) } },
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    // Small enough to need no splitting; one file is one request on a slow link.
    chunkSizeWarningLimit: 200,
    // The client reads a file by path only on Node; the console never passes one.
    rollupOptions: { external: ['node:fs', 'node:path'] },
  },
});
