// The pages' float vectors outside the process's memory: in the index's file, or in memory
// where no file can be made, every row's score is the one a scan of a matrix of them gives, bit
// for bit, through swap-removals and the rewrite that drops removed rows.
import fs from 'node:fs';
import os from 'node:os';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ScanPool, VectorMatrix } from '../../src/search/kernel/index.js';
import { RowScorer, RowScorers } from '../../src/search/kernel/row-scorer.js';
import { RowVectors } from '../../src/search/row-vectors.js';
import { normalizeVector } from '../../src/search/vectors.js';
import { until } from '../helpers/poll.js';

const DIMS = 1536;
const randomUnit = () => normalizeVector(Array.from({ length: DIMS }, () => Math.random() - 0.5))!;

describe.each([
  ['a file', os.tmpdir()],
  ['memory', null],
  ['memory, where no file can be made', '/proc/folio-cannot-be-here'],
])('row vectors in %s', (_, dir) => {
  const pool = new ScanPool({ threads: 2 });
  afterAll(() => pool.close());

  it('scores rows as a matrix scan does, through removals and rewrites', async () => {
    const vectors = new RowVectors(DIMS, dir);
    const scorer = new RowScorer(DIMS);
    // The rows as the matrix would hold them: swap-removals mirrored.
    let held: Float32Array[] = [];
    const add = (n: number) => {
      const fresh = Array.from({ length: n }, randomUnit);
      vectors.appendAll(fresh);
      held = [...held, ...fresh];
    };
    const removeRow = (row: number) => {
      const last = held.length - 1;
      if (row !== last) {
        vectors.moveRow(last, row);
        held[row] = held[last];
      }
      held.pop();
      vectors.truncate(last);
    };
    const expectScans = async () => {
      expect(vectors.rows).toBe(held.length);
      const matrix = new VectorMatrix(DIMS, { capacity: held.length });
      for (const v of held) matrix.append(v);
      const query = randomUnit();
      const want = await pool.score(matrix, query);
      const all = Int32Array.from({ length: held.length }, (_, i) => i);
      expect(Array.from(await vectors.score(scorer, query, all))).toEqual(Array.from(want));
      const some = Int32Array.from({ length: 50 }, (_, i) => (i * 37) % held.length);
      expect(Array.from(await vectors.score(scorer, query, some))).toEqual(Array.from(some, (r) => want[r]));
      pool.release(matrix);
    };
    add(1500);
    await expectScans();
    for (let i = 0; i < 200; i++) removeRow((i * 13) % held.length);
    add(10);
    await expectScans();
    // Past 16 MB of removed rows outweighing the rest: the live rows are rewritten.
    add(3000);
    while (held.length > 1000) removeRow(held.length % 7 === 0 ? 0 : held.length - 1);
    await expectScans();
    if (dir === os.tmpdir()) expect(vectors.residentBytes).toBe(0);
    else expect(vectors.residentBytes).toBeGreaterThanOrEqual(held.length * DIMS * 4);
    vectors.close();
  }, 60_000);

  it.runIf(dir === os.tmpdir())('fails a score whose read fails only once no read of it is still writing into the scorer', async () => {
    const vectors = new RowVectors(DIMS, dir);
    vectors.appendAll(Array.from({ length: 64 }, randomUnit));
    const read = fs.read;
    let issued = 0;
    let settled = 0;
    // The first read fails at once; the others land 20 ms later.
    const reads = vi.spyOn(fs, 'read').mockImplementation(((...args: Parameters<typeof fs.read>) => {
      const done = args[args.length - 1] as (error: Error | null, bytes: number) => void;
      const n = issued++;
      const finish = (error: Error | null, bytes: number) => {
        settled++;
        done(error, bytes);
      };
      if (n === 0) process.nextTick(() => finish(new Error('EIO: i/o error, read'), 0));
      else setTimeout(() => (read as (...a: unknown[]) => void)(...args.slice(0, -1), finish), 20);
    }) as typeof fs.read);
    try {
      const rows = Int32Array.from({ length: 32 }, (_, i) => 2 * i);
      await expect(vectors.score(new RowScorer(DIMS), randomUnit(), rows)).rejects.toThrow(/EIO/);
      expect(issued).toBe(32);
      expect(settled).toBe(issued);
    } finally {
      reads.mockRestore();
      vectors.close();
    }
  });

  it('scores rows whose reads are in flight when the file is closed, then lets the file go', async () => {
    const vectors = new RowVectors(DIMS, dir);
    const scorer = new RowScorer(DIMS);
    const held = Array.from({ length: 600 }, randomUnit);
    vectors.appendAll(held);
    const matrix = new VectorMatrix(DIMS, { capacity: held.length });
    for (const v of held) matrix.append(v);
    const query = randomUnit();
    const want = await pool.score(matrix, query);
    pool.release(matrix);
    // Every other row: 300 reads, most still queued for libuv's threads when close() returns.
    const rows = Int32Array.from({ length: 300 }, (_, i) => 2 * i);
    // The vector files this process holds open (unlinked, each named for it).
    const files = async () =>
      fs.readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return fs.readlinkSync(`/proc/self/fd/${fd}`).includes(`vectors-${process.pid}-`);
        } catch {
          return false;
        }
      }).length;
    expect(await files()).toBe(dir === os.tmpdir() ? 1 : 0);
    const scored = vectors.score(scorer, query, rows);
    vectors.close();
    expect(Array.from(await scored)).toEqual(Array.from(rows, (r) => want[r]));
    await until(files, (n) => n === 0);
  }, 60_000);
});

describe('row scorers', () => {
  it('lends each call a scorer of its own, at most `most` at once, the others waiting for one to come back', async () => {
    const scorers = new RowScorers(DIMS, 3);
    const seen = new Set<RowScorer>();
    const lent = new Set<RowScorer>();
    let most = 0;
    const query = randomUnit();
    const rows = Array.from({ length: 10 }, randomUnit);
    const write = (scorer: RowScorer, row: Float32Array) => new Float32Array(scorer.rows(1).buffer, scorer.rows(1).byteOffset, DIMS).set(row);
    const results = await Promise.all(
      rows.map((row, i) =>
        scorers.use(async (scorer) => {
          expect(lent.has(scorer)).toBe(false);
          lent.add(scorer);
          seen.add(scorer);
          most = Math.max(most, lent.size);
          write(scorer, row);
          await new Promise((resolve) => setTimeout(resolve, 5 + (i % 3)));
          const [score] = scorer.score(query, 1);
          lent.delete(scorer);
          return score;
        }),
      ),
    );
    expect(most).toBe(3);
    expect(seen.size).toBe(3);
    // Each call scored the row it wrote, untouched by the others meanwhile.
    const alone = new RowScorer(DIMS);
    expect(results).toEqual(
      rows.map((row) => {
        write(alone, row);
        return alone.score(query, 1)[0];
      }),
    );
  });
});
