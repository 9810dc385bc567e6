import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30000,
    hookTimeout: 60000,
    pool: 'forks',
    // Vitest's default (cores - 1) runs files one by one on two cores, where much of the
    // suite waits on child processes, PostgreSQL and timers: three files at once use both.
    maxWorkers: 3,
    minWorkers: 1,
  },
});
