// The web console: the single-page app that `npm run build` puts in dist/console, served
// at /console by this process (nothing from a CDN). It talks to the public API only.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';

// The same folder from src/http (tsx) and dist/http (built).
const CONSOLE_DIR = fileURLToPath(new URL('../../dist/console/', import.meta.url));

export async function registerConsole(app: FastifyInstance): Promise<void> {
  app.get('/', { schema: { hide: true } }, (_request, reply) => reply.redirect('/console/'));
  app.get('/console', { schema: { hide: true } }, (_request, reply) => reply.redirect('/console/'));
  if (!fs.existsSync(`${CONSOLE_DIR}index.html`)) {
    // A checkout run from source before `npm run build`: say so rather than a bare 404.
    app.get('/console/*', { schema: { hide: true } }, (_request, reply) =>
      reply.status(503).type('text/plain').send('The console is not built: run `npm run build`.'),
    );
    return;
  }
  await app.register(fastifyStatic, {
    root: CONSOLE_DIR,
    prefix: '/console/',
    cacheControl: false,
    // Hashed asset names change with every build; index.html must always be fresh.
    setHeaders: (reply, filePath) => {
      reply.header('cache-control', filePath.endsWith('index.html') ? 'no-cache' : 'public, max-age=31536000, immutable');
    },
  });
}
