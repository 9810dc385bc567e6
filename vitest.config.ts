import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * The longest files, longest first. Vitest orders by the durations it cached on the last
 * run, which a fresh clone (and CI, whose `npm ci` empties node_modules) does not have: in
 * its default order the longest file starts last and the run ends with one busy worker.
 * Ordered by the files' durations in a whole run (2026-11-29, evening, `.ci/run` on a quiet machine).
 */
const LONGEST = [
  'test/api/ingest-corpus.test.ts',
  'test/api/durability.test.ts',
  'test/api/process.test.ts',
  'test/unit/ocr-corpus.test.ts',
  'test/api/workers.test.ts',
  'test/unit/page-index-snapshot.test.ts',
  'test/unit/page-index.test.ts',
  'test/api/extractions.test.ts',
  'test/api/webhooks-process.test.ts',
  'test/api/shutdown.test.ts',
  'test/api/search.test.ts',
  'test/api/ingest.test.ts',
  'test/unit/page-index-bits.test.ts',
  'test/api/answer.test.ts',
  'test/api/mcp.test.ts',
  'test/api/ocr.test.ts',
  'test/unit/migrations.test.ts',
  'test/unit/parsers-pool.test.ts',
  'test/api/parse-limits.test.ts',
  'test/api/webhooks.test.ts',
  'test/api/fuzz.test.ts',
  'test/api/answer-stream.test.ts',
  'test/unit/vector-kernel.test.ts',
  'test/api/docs-examples.test.ts',
  'test/api/listing.test.ts',
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = LONGEST.indexOf(path.relative(import.meta.dirname, f.moduleId));
      return i === -1 ? LONGEST.length : i;
    };
    return (await super.sort(files)).map((f, i) => ({ f, i })).sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i).map(({ f }) => f);
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30000,
    hookTimeout: 60000,
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/worker-threads.ts'],
    pool: 'forks',
    // Vitest's default (cores - 1) runs files one by one on two cores, where much of the
    // suite waits on child processes, PostgreSQL and timers: three files at once use both.
    maxWorkers: 3,
    sequence: { sequencer: LongestFirst },
  },
});
