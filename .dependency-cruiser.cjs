// The layer rule (docs/architecture.md): imports point down
// http -> services -> sources -> store, providers, text; errors.ts and config.ts sit below all.
// `npm run lint` runs it; type-only imports count, so a type cannot smuggle a cycle in.
const SERVICES = '^src/(documents|search|ingest|answer|extraction|tasks|workspaces|webhooks)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'A cycle ties two modules into one: split out what both need.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'entry-points-on-top',
      severity: 'error',
      comment: 'main.ts and runtime.ts wire everything: nothing imports them but main.ts.',
      from: { path: '^src/', pathNot: '^src/main\\.ts$' },
      to: { path: '^src/(main|runtime)\\.ts$' },
    },
    {
      name: 'http-only-from-the-top',
      severity: 'error',
      comment: 'Services never see HTTP: they raise domain errors with field paths that http/ maps.',
      from: { path: '^src/', pathNot: '^src/(http/|main\\.ts$|runtime\\.ts$)' },
      to: { path: '^src/http/' },
    },
    {
      name: 'sources-below-services',
      severity: 'error',
      comment: 'Acquiring a document (fetch, detect, parse, accept) knows nothing of what is done with it.',
      from: { path: '^src/sources/' },
      to: { path: SERVICES },
    },
    {
      name: 'store-and-providers-at-the-bottom',
      severity: 'error',
      comment: 'The store and the providers import nothing of ours but config, errors, the LRU map, the worker starter, the slicer of long loops, the content codings and the text helpers (leaves).',
      from: { path: '^src/(store|providers)/' },
      to: { path: '^src/', pathNot: ['^src/(config|errors|lru|worker-entry|slices|content-codings)\\.ts$', '^src/store/', '^src/providers/', '^src/text/'] },
    },
    {
      name: 'leaves-import-nothing',
      severity: 'error',
      comment: 'The cache map, the worker starter, the slicer of long loops and the content codings, which every layer may use, import nothing of ours.',
      from: { path: '^src/(lru|worker-entry|slices|content-codings)\\.ts$' },
      to: { path: '^src/' },
    },
    {
      name: 'text-is-a-leaf',
      severity: 'error',
      comment: 'Pure text helpers: every layer may use them, so they import nothing of ours but errors.',
      from: { path: '^src/text/' },
      to: { path: '^src/', pathNot: ['^src/errors\\.ts$', '^src/text/'] },
    },
    {
      name: 'store-apart-from-providers',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^src/providers/' },
    },
    {
      name: 'sql-only-in-the-store',
      severity: 'error',
      comment: 'Only src/store builds SQL: elsewhere kysely may be imported for its types only.',
      from: { path: '^src/', pathNot: '^src/store/' },
      to: { path: 'node_modules/kysely/', dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
