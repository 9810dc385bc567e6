#!/usr/bin/env node
// The folio command: serve, worker, migrate, keys, mcp. The only place that reads the
// environment; runtime.ts assembles the parts.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config, type Scope } from './config.js';
import type { Role } from './runtime.js';
import { migrateToLatest, openStore, type Store } from './store/engine.js';
import { DataDirLockedError } from './store/lock.js';
import { VERSION } from './version.js';
import { createKey, listKeys, revokeKey } from './workspaces/keys.js';

const USAGE = `Usage:
  folio serve [--role all|api]     run the HTTP API and, with role all (default), the task workers
  folio worker                     run only the task workers (needs DATABASE_URL to share the queue)
  folio migrate                    apply pending database migrations and exit
  folio mcp                        serve the MCP tools over stdio, bridged to FOLIO_URL with FOLIO_API_KEY
  folio keys create --workspace W --scope read|write|admin [--label L]
  folio keys list
  folio keys revoke <id-or-prefix>
  folio --version                  print the version`;

async function open(config: Config): Promise<Store> {
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, cacheMb: config.embeddedCacheMb, walMb: config.embeddedWalMb });
  await migrateToLatest(store.db);
  return store;
}

async function serve(config: Config, role: Role): Promise<void> {
  const store = await open(config);
  // Imported here, not above: the keys and migrate commands then load none of the HTTP
  // server, the workers and their libraries (1.2 s of a 3.2 s `folio keys list`, idle).
  const { startRuntime } = await import('./runtime.js');
  const runtime = await startRuntime(config, store, { role });
  const { app } = runtime;

  if (app && config.apiKeys.length === 0 && (await listKeys(store.db)).length === 0) {
    // A fresh install must be usable without a second command (the embedded data dir is
    // locked while the server runs): issue one admin key and show it once.
    const { key } = await createKey(store.db, 'default', 'admin', 'first start');
    app.log.warn({ workspace: 'default', scope: 'admin' }, 'no API keys configured; created one');
    console.error(`\nFirst start: created an admin API key for workspace "default":\n\n  ${key}\n\nIt is shown only once.\n`);
  }

  let closing = false;
  const shutdown = async () => {
    if (closing) return;
    closing = true;
    await runtime.close();
    await store.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown());
  process.on('SIGINT', () => void shutdown());
  if (app) await app.listen({ port: config.port, host: config.host });
}

async function keysCommand(config: Config, args: string[]): Promise<void> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    options: { workspace: { type: 'string' }, scope: { type: 'string' }, label: { type: 'string' } },
    allowPositionals: true,
  });
  const store = await open(config);
  try {
    if (action === 'create') {
      const scope = values.scope as Scope | undefined;
      if (!values.workspace || !scope || !['read', 'write', 'admin'].includes(scope)) {
        throw new ConfigError('keys create needs --workspace W and --scope read|write|admin');
      }
      const { key, summary } = await createKey(store.db, values.workspace, scope, values.label ?? null);
      console.log(key);
      console.error(`Key ${summary.id} (${summary.prefix}...) for workspace "${summary.workspace}", scope ${summary.scope}. It is shown only once.`);
    } else if (action === 'list') {
      for (const k of await listKeys(store.db)) {
        console.log([k.id, k.prefix, k.workspace, k.scope, k.label ?? '', k.created_at, k.revoked_at ? `revoked ${k.revoked_at}` : 'active'].join('\t'));
      }
    } else if (action === 'revoke') {
      if (positionals.length !== 1) throw new ConfigError('keys revoke needs one key id or prefix');
      const count = await revokeKey(store.db, positionals[0]);
      if (count === 0) throw new ConfigError(`no active key matches "${positionals[0]}"`);
      console.log(`revoked ${count} key(s)`);
    } else {
      throw new ConfigError(USAGE);
    }
  } finally {
    await store.close();
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  // Before the configuration is read: the version needs none, and answers even when it is invalid.
  if (command === '--version' || command === '-v') {
    console.log(VERSION);
    return;
  }
  // A client of a running Folio: it needs the server's address and a key, none of its configuration.
  if (command === 'mcp') {
    const url = process.env.FOLIO_URL;
    const key = process.env.FOLIO_API_KEY;
    if (!url || !key) throw new ConfigError('folio mcp needs FOLIO_URL (such as http://127.0.0.1:8080) and FOLIO_API_KEY');
    const { serveStdio } = await import('./mcp/stdio.js');
    return serveStdio(url, key);
  }
  const config = loadConfig();
  switch (command) {
    case 'serve': {
      const { values } = parseArgs({ args, options: { role: { type: 'string', default: 'all' } } });
      if (values.role !== 'all' && values.role !== 'api') throw new ConfigError('--role must be all or api');
      return serve(config, values.role);
    }
    case 'worker':
      return serve(config, 'worker');
    case 'migrate': {
      const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, cacheMb: config.embeddedCacheMb, walMb: config.embeddedWalMb });
      try {
        const applied = await migrateToLatest(store.db);
        console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
      } finally {
        await store.close();
      }
      return;
    }
    case 'keys':
      return keysCommand(config, args);
    default:
      throw new ConfigError(USAGE);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof DataDirLockedError) {
    console.error(error.message);
  } else {
    console.error(error);
  }
  process.exit(1);
});
