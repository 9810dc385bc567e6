import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ScanPool, VectorMatrix, topK, topKClamped } from '../../src/search/kernel/index.js';

function randomUnit(dims: number): Float32Array {
  const v = Float32Array.from({ length: dims }, () => Math.random() - 0.5);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

function filled(dims: number, rows: number, opts = {}): { matrix: VectorMatrix; vectors: Float32Array[] } {
  const matrix = new VectorMatrix(dims, opts);
  const vectors = Array.from({ length: rows }, () => randomUnit(dims));
  for (const v of vectors) matrix.append(v);
  return { matrix, vectors };
}

function expectScores(scores: Float32Array, query: Float32Array, vectors: Float32Array[]): void {
  expect(scores.length).toBe(vectors.length);
  vectors.forEach((v, i) => expect(Math.abs(scores[i] - dot(query, v))).toBeLessThan(1e-5));
}

describe('vector scan kernel', () => {
  const pool = new ScanPool({ threads: 2 });
  afterAll(() => pool.close());

  // Padded rows of 6,144 bytes (the kernel's 96-byte steps alone), 448 (4 of them, then 4 steps
  // of 16 bytes), 128 (1, then 2) and 64 (16-byte steps alone).
  for (const dims of [1536, 100, 32, 7]) {
    for (const rows of [1, 3, 1001]) {
      it(`scores ${rows} rows of ${dims} dims like a plain dot product`, async () => {
        const { matrix, vectors } = filled(dims, rows);
        const query = randomUnit(dims);
        expectScores(await pool.score(matrix, query), query, vectors);
      });
    }
  }

  it('splits large scans across threads', async () => {
    // 2,000 rows x 6 KiB is past the size one thread takes alone.
    const { matrix, vectors } = filled(1536, 2000);
    const query = randomUnit(1536);
    expectScores(await pool.score(matrix, query), query, vectors);
    const rows = Int32Array.from({ length: 1999 }, (_, i) => 1999 - i);
    expectScores(await pool.score(matrix, query, rows), query, Array.from(rows, (r) => vectors[r]));
  });

  it('scores a subset of rows, in the order given', async () => {
    const { matrix, vectors } = filled(1536, 1001);
    const rows = Int32Array.from({ length: 103 }, () => Math.floor(Math.random() * 1001));
    rows[1] = rows[0]; // duplicates are fine
    const query = randomUnit(1536);
    expectScores(await pool.score(matrix, query, rows), query, Array.from(rows, (r) => vectors[r]));
    expect(await pool.score(matrix, query, new Int32Array(0))).toHaveLength(0);
    await expect(pool.score(matrix, query, Int32Array.of(0, 1001))).rejects.toThrow(RangeError);
    await expect(pool.score(matrix, randomUnit(8))).rejects.toThrow(/dims/);
  });

  it('scores every count of given rows, the kernel taking them 6 at a time and the rest one by one', async () => {
    for (const dims of [1536, 100]) {
      const { matrix, vectors } = filled(dims, 40);
      const query = randomUnit(dims);
      for (let n = 1; n <= 13; n++) {
        const rows = Int32Array.from({ length: n }, (_, i) => (i * 11) % 40);
        expectScores(await pool.score(matrix, query, rows), query, Array.from(rows, (r) => vectors[r]));
      }
    }
  });

  it('scores into pooled buffers with scoreWith, concurrent full scans in shared passes, as score does', async () => {
    const { matrix, vectors } = filled(1536, 2500);
    // More full scans than one pass takes (MAX_QUERIES), and scans of some rows between them.
    const queries = Array.from({ length: 21 }, () => randomUnit(1536));
    const rows = Int32Array.from({ length: 300 }, (_, i) => (i * 7) % 2500);
    const seen = new Set<ArrayBufferLike>();
    const copies = await Promise.all(
      queries.map((query, i) =>
        pool.scoreWith(matrix, query, i % 2 ? rows : undefined, (scores) => {
          seen.add(scores.buffer);
          return scores.slice();
        }),
      ),
    );
    copies.forEach((scores, i) => {
      const expected = i % 2 ? Array.from(rows, (r) => vectors[r]) : vectors;
      expect(scores).toHaveLength(expected.length);
      expectScores(scores, queries[i], expected);
    });
    // A shared pass sums in a lone scan's order: a query's scores do not depend on the
    // searches it happened to share a pass with (2,500 rows: the last block of a call is short).
    for (const i of [0, 2, 20]) expect(copies[i]).toEqual(await pool.score(matrix, queries[i]));
    // Later scans reuse those buffers instead of allocating their own.
    const buffers = new Set<ArrayBufferLike>();
    for (const query of queries) await pool.scoreWith(matrix, query, undefined, (scores) => buffers.add(scores.buffer));
    expect([...buffers].every((b) => seen.has(b))).toBe(true);
    // A caller whose reading fails gets its error; the others of its pass their scores.
    const [failed, fine] = await Promise.allSettled([
      pool.scoreWith(matrix, queries[0], undefined, () => {
        throw new Error('reader failed');
      }),
      pool.scoreWith(matrix, queries[1], undefined, (scores) => scores.slice()),
    ]);
    expect(failed).toMatchObject({ status: 'rejected', reason: new Error('reader failed') });
    expect(fine.status).toBe('fulfilled');
    expectScores((fine as PromiseFulfilledResult<Float32Array>).value, queries[1], vectors);
    await expect(pool.scoreWith(matrix, randomUnit(8), undefined, () => 0)).rejects.toThrow(/dims/);
  });

  it('scores shared passes over short rows, whose block is longer than a kernel call, as lone scans do', async () => {
    // 140,000 rows of 64 bytes (9 MB, two parts): a 256 KB block holds 4,096 rows, a call 512.
    const { matrix, vectors } = filled(16, 140_000);
    const queries = Array.from({ length: 9 }, () => randomUnit(16));
    const shared = await Promise.all(queries.map((query) => pool.scoreWith(matrix, query, undefined, (scores) => scores.slice())));
    const bytes = (scores: Float32Array) => Buffer.from(scores.buffer, scores.byteOffset, scores.byteLength);
    for (const [i, query] of queries.entries()) {
      // Bit for bit (toEqual on 140,000 floats took seconds a query, 30 s on a busy machine).
      expect(bytes(shared[i]).equals(bytes(await pool.score(matrix, query)))).toBe(true);
      for (const row of [0, 511, 512, 4095, 4096, 139_999]) expect(Math.abs(shared[i][row] - dot(query, vectors[row]))).toBeLessThan(1e-5);
    }
    pool.release(matrix);
  });

  it('scores small scans on the calling thread when the matrix has a slot for it, and on the workers when not', async () => {
    for (const slots of [undefined, 2]) {
      const { matrix, vectors } = filled(1536, 300, { slots });
      const query = randomUnit(1536);
      const rows = Int32Array.from({ length: 50 }, (_, i) => 299 - i * 3);
      expectScores(await pool.score(matrix, query, rows), query, Array.from(rows, (r) => vectors[r]));
      expectScores(await pool.scoreWith(matrix, query, undefined, (s) => s.slice()), query, vectors);
      pool.release(matrix);
    }
  });

  it('scores a scan of given rows in two parts, the first on the calling thread when the matrix has a slot for it', async () => {
    // 3,000 rows of 6 KiB: two parts of about 9 MiB, small enough for the calling thread to take one.
    for (const slots of [undefined, 2]) {
      const { matrix, vectors } = filled(1536, 3200, { slots });
      const query = randomUnit(1536);
      const rows = Int32Array.from({ length: 3000 }, (_, i) => 3199 - i);
      expectScores(await pool.score(matrix, query, rows), query, Array.from(rows, (r) => vectors[r]));
      pool.release(matrix);
    }
  });

  /** A full scan of a new query whose reader checks the scores while they are valid, then calls `then`. */
  function checkedScan(matrix: VectorMatrix, vectors: Float32Array[], then: () => void): Promise<void> {
    const query = randomUnit(1536);
    return pool.scoreWith(matrix, query, undefined, (scores) => {
      expectScores(scores, query, vectors);
      then();
    });
  }

  it('gives every reader its own scores when readers start scans of their own', async () => {
    // No slot for the calling thread: every full scan goes to the workers in shared passes. Each
    // reader checks its scores at once (the buffer is valid only during the call), and the first
    // readers queue scans of their own while other passes are waiting or running.
    const { matrix, vectors } = filled(1536, 1200, { slots: 2 });
    const checked: Promise<void>[] = [];
    const scan = (depth: number): Promise<void> =>
      checkedScan(matrix, vectors, () => {
        if (depth > 0) for (let i = 0; i < 3; i++) checked.push(scan(depth - 1));
      });
    checked.push(...Array.from({ length: 12 }, () => scan(2)));
    for (let i = 0; i < checked.length; i++) await checked[i];
    expect(checked).toHaveLength(12 + 36 + 108);
  });

  it('gives every reader its own scores when the next pass starts during the ranking and its second worker joins late', async () => {
    // 3,000 rows of 6 KiB split between both workers. Scans queue while a pass runs, so each
    // next pass starts on one worker while the readers rank and the other joins afterwards;
    // slow readers let the first worker take every chunk before the second one joins.
    const { matrix, vectors } = filled(1536, 3000, { slots: 2 });
    const queued: Promise<void>[] = [];
    const scan = (wait: number): Promise<void> =>
      checkedScan(matrix, vectors, () => {
        const until = performance.now() + wait;
        while (performance.now() < until); // a reader that keeps the event loop busy
      });
    for (const wait of [0, 30]) {
      queued.push(...Array.from({ length: 20 }, () => scan(wait)));
      await Promise.all(queued);
    }
    expect(queued).toHaveLength(40);
  });

  it('rejects queued and running shared passes when the pool closes while a reader ranks', async () => {
    const own = new ScanPool({ threads: 2 });
    const { matrix } = filled(1536, 3000, { slots: 2 });
    let closed: Promise<void> | undefined;
    // The first scan runs alone, the next eight share a pass: the first of those closes the pool
    // while the pass after it runs and the other readers of its own pass wait their turn.
    const scans = Array.from({ length: 20 }, (_, i) =>
      own.scoreWith(matrix, randomUnit(1536), undefined, () => {
        if (i === 1) closed = own.close();
        return i;
      }),
    );
    const settled = await Promise.allSettled(scans);
    await closed;
    expect(settled.slice(0, 2)).toEqual([0, 1].map((value) => ({ status: 'fulfilled', value })));
    const rejected = settled.filter((s) => s.status === 'rejected');
    expect(rejected.length).toBeGreaterThan(0);
    for (const s of rejected) expect(String(s.reason)).toMatch(/closed/);
  });

  it('lets other callbacks run between the readers of one shared pass', async () => {
    // No slot for the calling thread: the scans go to the workers, and share passes.
    const { matrix } = filled(1536, 500, { slots: 2 });
    const order: string[] = [];
    // The first scan runs alone; the three that arrive meanwhile share the next pass.
    const first = pool.scoreWith(matrix, randomUnit(1536), undefined, () => order.push('first'));
    const shared = [1, 2, 3].map((i) =>
      pool.scoreWith(matrix, randomUnit(1536), undefined, () => {
        order.push(`reader ${i}`);
        if (i === 1) setImmediate(() => order.push('other callback'));
      }),
    );
    await Promise.all([first, ...shared]);
    expect(order).toEqual(['first', 'reader 1', 'other callback', 'reader 2', 'reader 3']);
  });

  it('runs a scan that arrives while the readers of the last pass rank, with no other scan to come', async () => {
    const { matrix, vectors } = filled(1536, 500, { slots: 2 });
    let late: Promise<void> | undefined;
    // The first scan runs alone; two arrive meanwhile and share the next pass, after which none
    // waits. Between that pass's two readers a third scan arrives, and no other after it.
    const first = checkedScan(matrix, vectors, () => {});
    const shared = [1, 2].map((i) =>
      checkedScan(matrix, vectors, () => {
        if (i === 1) setImmediate(() => (late = checkedScan(matrix, vectors, () => {})));
      }),
    );
    await Promise.all([first, ...shared]);
    expect(late).toBeDefined();
    const stranded = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the last scan never ran')), 5000).unref());
    await Promise.race([late, stranded]);
  });

  it('keeps existing rows when it grows past its capacity, also for workers already attached', async () => {
    const { matrix, vectors } = filled(1536, 3, { capacity: 2 });
    const query = randomUnit(1536);
    expectScores(await pool.score(matrix, query), query, vectors);
    const before = matrix.capacity;
    for (let i = 0; i < 3000; i++) vectors.push(randomUnit(1536));
    vectors.slice(3).forEach((v) => matrix.append(v));
    expect(matrix.capacity).toBeGreaterThan(before);
    expect(matrix.byteLength).toBeGreaterThanOrEqual(matrix.capacity * 1536 * 4);
    expect(matrix.get(0)).toEqual(vectors[0]);
    expect(matrix.get(2999)).toEqual(vectors[2999]);
    expectScores(await pool.score(matrix, query), query, vectors);
  });

  it('sets, copies and truncates rows', async () => {
    const { matrix, vectors } = filled(7, 5);
    const query = randomUnit(7);
    vectors[1] = randomUnit(7);
    matrix.set(1, vectors[1]);
    matrix.copyRow(4, 0); // swap-remove of row 0
    vectors[0] = vectors[4];
    matrix.truncate(4);
    vectors.length = 4;
    expect(matrix.rows).toBe(4);
    expectScores(await pool.score(matrix, query), query, vectors);
    vectors.push(randomUnit(7));
    expect(matrix.append(vectors[4])).toBe(4);
    expectScores(await pool.score(matrix, query), query, vectors);
    expect(() => matrix.set(5, vectors[0])).toThrow(RangeError);
    expect(() => matrix.copyRow(0, 5)).toThrow(RangeError);
    expect(() => matrix.truncate(6)).toThrow(RangeError);
    expect(() => matrix.append(new Float32Array(8))).toThrow(/dims/);
    expect(matrix.rows).toBe(5);
  });

  it('refuses rows beyond its limit with a clear error', () => {
    const matrix = new VectorMatrix(4, { maxRows: 2 });
    matrix.append(randomUnit(4));
    matrix.append(randomUnit(4));
    expect(() => matrix.append(randomUnit(4))).toThrow(/full.*4 GiB/);
    // wasm32 memory holds about 700k rows of 1536 dims
    expect(new VectorMatrix(1536, { capacity: 1 }).maxRows).toBeGreaterThan(690_000);
  });

  it('serves several matrices from one pool, concurrently', async () => {
    const a = filled(1536, 1001);
    const b = filled(7, 3);
    const qa = randomUnit(1536);
    const qb = randomUnit(7);
    const [sa, sb, sa2] = await Promise.all([
      pool.score(a.matrix, qa),
      pool.score(b.matrix, qb),
      pool.score(a.matrix, qa, Int32Array.of(7)),
    ]);
    expectScores(sa, qa, a.vectors);
    expectScores(sb, qb, b.vectors);
    expectScores(sa2, qa, [a.vectors[7]]);
    pool.release(a.matrix);
    expectScores(await pool.score(a.matrix, qa), qa, a.vectors);
    expect(await pool.score(new VectorMatrix(7), qb)).toHaveLength(0);
  });

  it('lets one pool at a time scan a matrix, since they would share its scratch slots', async () => {
    const { matrix, vectors } = filled(7, 3);
    const query = randomUnit(7);
    await pool.score(matrix, query);
    const other = new ScanPool({ threads: 1 });
    try {
      await expect(other.score(matrix, query)).rejects.toThrow(/another ScanPool/);
      pool.release(matrix);
      expectScores(await other.score(matrix, query), query, vectors);
    } finally {
      await other.close();
    }
    expectScores(await pool.score(matrix, query), query, vectors); // the closed pool no longer holds it
  });

  it('ranks the k best, ties by id ascending', () => {
    const scores = Float32Array.of(0.5, 0.9, 0.5, 0.1, 0.9, 0.7);
    expect(Array.from(topK(scores, 3))).toEqual([1, 4, 5]);
    expect(Array.from(topK(scores, 4, ['f', 'e', 'd', 'c', 'b', 'a']))).toEqual([4, 1, 5, 2]);
    expect(Array.from(topK(scores, 10))).toEqual([1, 4, 5, 0, 2, 3]);
    expect(topK(scores, 0)).toHaveLength(0);
    const many = Float32Array.from({ length: 5000 }, () => Math.round(Math.random() * 50));
    const expected = Array.from(many.keys())
      .sort((x, y) => many[y] - many[x] || x - y)
      .slice(0, 20);
    expect(Array.from(topK(many, 20))).toEqual(expected);
    // Ties broken by ids that run against the positions, given as a function.
    const id = (i: number) => 10_000 - i;
    const byId = Array.from(many.keys())
      .sort((x, y) => many[y] - many[x] || id(x) - id(y))
      .slice(0, 20);
    expect(Array.from(topK(many, 20, id))).toEqual(byId);
    // A NaN score after the first k does not displace a kept one.
    expect(Array.from(topK(Float64Array.from([0.5, 0.9, 0.1, NaN]), 2))).toEqual([1, 0]);
    expect(Array.from(topK(many.subarray(0, 15), 20, id))).toEqual(
      Array.from(many.subarray(0, 15).keys()).sort((x, y) => many[y] - many[x] || id(x) - id(y)),
    );
  });

  it('ranks the k best clamped scores like a sort of them, ties by id, NaN never', () => {
    const clamp = (x: number) => Math.min(1, Math.max(0, x));
    // Scores beyond both bounds tie there and go by id; rounding to tenths makes ties inside too.
    const scores = Float32Array.from({ length: 3000 }, (_, i) => (i % 97 === 5 ? NaN : Math.round((Math.random() * 2.4 - 1.2) * 10) / 10));
    scores[0] = NaN;
    const id = (i: number) => (i * 7919) % 3001; // distinct, unrelated to positions
    const sorted = Array.from(scores.keys())
      .filter((i) => !Number.isNaN(scores[i]))
      .sort((x, y) => clamp(scores[y]) - clamp(scores[x]) || id(x) - id(y));
    for (const k of [0, 1, 10, 300, 2900, 5000]) {
      expect(Array.from(topKClamped(scores, k, 0, 1, id)), `k ${k}`).toEqual(sorted.slice(0, k));
    }
    // Every score below the lower bound: all tie, so the lowest ids win.
    const below = Float32Array.from({ length: 500 }, () => -Math.random());
    const byId = Array.from(below.keys()).sort((x, y) => id(x) - id(y));
    expect(Array.from(topKClamped(below, 20, 0, 1, id))).toEqual(byId.slice(0, 20));
  });

  it('close() ends the workers and later scans fail', async () => {
    const own = new ScanPool({ threads: 1 });
    const { matrix } = filled(7, 3);
    await own.score(matrix, randomUnit(7));
    await own.close();
    await expect(own.score(matrix, randomUnit(7))).rejects.toThrow(/closed/);
  });

  it('lets the process exit, whether or not close() is called', () => {
    const kernel = fileURLToPath(new URL('../../src/search/kernel/index.ts', import.meta.url));
    for (const close of [true, false]) {
      const script = `
        import { ScanPool, VectorMatrix } from ${JSON.stringify(kernel)};
        const pool = new ScanPool();
        const m = new VectorMatrix(3);
        m.append(Float32Array.of(1, 2, 3));
        const [s] = await pool.score(m, Float32Array.of(1, 1, 1));
        ${close ? 'await pool.close();' : ''}
        console.log(s);`;
      const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(out.trim()).toBe('6');
    }
  });
});
