;; Dot-product scan kernel. Assemble with `npx tsx src/search/kernel/assemble.ts`,
;; which regenerates wasm-bytes.ts. Addresses and lengths are bytes; rows and the
;; query are zero-padded to a multiple of 16 floats, so `len` is a multiple of 64.
(module
  (import "env" "memory" (memory 1 65536 shared))

  ;; Query . one row, 96 bytes per step into 6 independent accumulators, then 16 bytes
  ;; per step into the first for a row whose length is not a multiple of 96. The adds
  ;; into an accumulator wait on each other, so the chains, not the loads, bound a step:
  ;; 6 chains ran 17-19% faster than 4 on rows in cache (the 8-client load, whose shared
  ;; passes read each block of rows from L2), while 8 no longer fit V8's registers (it
  ;; stores them to the stack every step, half the speed). Rows are taken one after
  ;; another so that a scan is one sequential stream, which the hardware prefetcher
  ;; follows; interleaving 4 rows (4 streams that restart every few KB) measured about
  ;; half as fast from DRAM.
  (func $dot (param $q i32) (param $p i32) (param $len i32) (result f32)
    (local $end i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128) (local $a4 v128) (local $a5 v128)
    (local.set $end (i32.add (local.get $p) (local.get $len)))
    (block $steps_done
      (loop $steps
        (br_if $steps_done (i32.lt_u (i32.sub (local.get $end) (local.get $p)) (i32.const 96)))
        (local.set $a0 (f32x4.add (local.get $a0)
          (f32x4.mul (v128.load (local.get $q)) (v128.load (local.get $p)))))
        (local.set $a1 (f32x4.add (local.get $a1)
          (f32x4.mul (v128.load offset=16 (local.get $q)) (v128.load offset=16 (local.get $p)))))
        (local.set $a2 (f32x4.add (local.get $a2)
          (f32x4.mul (v128.load offset=32 (local.get $q)) (v128.load offset=32 (local.get $p)))))
        (local.set $a3 (f32x4.add (local.get $a3)
          (f32x4.mul (v128.load offset=48 (local.get $q)) (v128.load offset=48 (local.get $p)))))
        (local.set $a4 (f32x4.add (local.get $a4)
          (f32x4.mul (v128.load offset=64 (local.get $q)) (v128.load offset=64 (local.get $p)))))
        (local.set $a5 (f32x4.add (local.get $a5)
          (f32x4.mul (v128.load offset=80 (local.get $q)) (v128.load offset=80 (local.get $p)))))
        (local.set $q (i32.add (local.get $q) (i32.const 96)))
        (local.set $p (i32.add (local.get $p) (i32.const 96)))
        (br $steps)))
    (block $rest_done
      (loop $rest
        (br_if $rest_done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $a0 (f32x4.add (local.get $a0)
          (f32x4.mul (v128.load (local.get $q)) (v128.load (local.get $p)))))
        (local.set $q (i32.add (local.get $q) (i32.const 16)))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $rest)))
    (local.set $a0 (f32x4.add
      (f32x4.add (f32x4.add (local.get $a0) (local.get $a1)) (f32x4.add (local.get $a2) (local.get $a3)))
      (f32x4.add (local.get $a4) (local.get $a5))))
    (f32.add
      (f32.add (f32x4.extract_lane 0 (local.get $a0)) (f32x4.extract_lane 1 (local.get $a0)))
      (f32.add (f32x4.extract_lane 2 (local.get $a0)) (f32x4.extract_lane 3 (local.get $a0)))))

  ;; Scores $n consecutive rows, the first at $p, into f32s at $out.
  (func (export "scan") (param $q i32) (param $p i32) (param $stride i32) (param $n i32) (param $out i32)
    (local $end i32)
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $n) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (f32.store (local.get $out) (call $dot (local.get $q) (local.get $p) (local.get $stride)))
        (local.set $p (i32.add (local.get $p) (local.get $stride)))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (br $next))))

  ;; Scores $n consecutive rows, the first at $p, against $nq queries $stride apart from $q:
  ;; row i with query j goes to the f32 at $out + 4 (j * $outStride + i). The rows go in
  ;; blocks of $block rows, which every query sweeps in turn: the block is read from memory
  ;; once, as one sequential stream, and stays in the core's cache for the other queries, so
  ;; concurrent searches share one pass over the matrix instead of dividing the memory
  ;; bandwidth. Each score is $dot's, the sum in the same order as a scan's.
  (func (export "scan_multi") (param $q i32) (param $nq i32) (param $p i32) (param $stride i32)
                              (param $n i32) (param $out i32) (param $outStride i32) (param $block i32)
    (local $b i32) (local $bend i32) (local $j i32) (local $qj i32) (local $pi i32) (local $o i32) (local $oend i32)
    (block $blocks_done
      (loop $blocks
        (br_if $blocks_done (i32.ge_u (local.get $b) (local.get $n)))
        (local.set $bend (i32.add (local.get $b) (local.get $block)))
        (if (i32.gt_u (local.get $bend) (local.get $n)) (then (local.set $bend (local.get $n))))
        (local.set $j (i32.const 0))
        (block $queries_done
          (loop $queries
            (br_if $queries_done (i32.ge_u (local.get $j) (local.get $nq)))
            (local.set $qj (i32.add (local.get $q) (i32.mul (local.get $j) (local.get $stride))))
            (local.set $pi (i32.add (local.get $p) (i32.mul (local.get $b) (local.get $stride))))
            (local.set $o (i32.add (local.get $out)
              (i32.shl (i32.add (i32.mul (local.get $j) (local.get $outStride)) (local.get $b)) (i32.const 2))))
            (local.set $oend (i32.add (local.get $o) (i32.shl (i32.sub (local.get $bend) (local.get $b)) (i32.const 2))))
            (block $rows_done
              (loop $rows
                (br_if $rows_done (i32.ge_u (local.get $o) (local.get $oend)))
                (f32.store (local.get $o) (call $dot (local.get $qj) (local.get $pi) (local.get $stride)))
                (local.set $pi (i32.add (local.get $pi) (local.get $stride)))
                (local.set $o (i32.add (local.get $o) (i32.const 4)))
                (br $rows)))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $queries)))
        (local.set $b (local.get $bend))
        (br $blocks))))

  ;; Scores the $n rows whose indices are the i32s at $idx (row i at $base + i * $stride), each
  ;; summed in the order a scan sums it, so that a row's score is the same bits either way.
  (func (export "gather") (param $q i32) (param $base i32) (param $stride i32) (param $idx i32)
                          (param $n i32) (param $out i32)
    (local $end i32)
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $n) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (f32.store (local.get $out) (call $dot (local.get $q)
          (i32.add (local.get $base) (i32.mul (i32.load (local.get $idx)) (local.get $stride)))
          (local.get $stride)))
        (local.set $idx (i32.add (local.get $idx) (i32.const 4)))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (br $next))))

  ;; Int8 codes (kernel of the compact scan, see store/vector-codes.ts). A row is its codes, `len` bytes (a
  ;; multiple of 16), then its scale as an f32; a query is `len` i16s, then its scale. The dot
  ;; product is exact in i32 (store/vector-codes.ts bounds the query's magnitude so that no partial sum
  ;; overflows), and comes out as the approximate cosine, dot x row scale x query scale.
  (func $dot_i8 (param $q i32) (param $p i32) (param $len i32) (result f32)
    (local $end i32) (local $v v128) (local $w v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local.set $end (i32.add (local.get $p) (local.get $len)))
    (block $steps_done
      (loop $steps
        (br_if $steps_done (i32.lt_u (i32.sub (local.get $end) (local.get $p)) (i32.const 32)))
        (local.set $v (v128.load (local.get $p)))
        (local.set $w (v128.load offset=16 (local.get $p)))
        (local.set $a0 (i32x4.add (local.get $a0)
          (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $v)) (v128.load (local.get $q)))))
        (local.set $a1 (i32x4.add (local.get $a1)
          (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $v)) (v128.load offset=16 (local.get $q)))))
        (local.set $a2 (i32x4.add (local.get $a2)
          (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $w)) (v128.load offset=32 (local.get $q)))))
        (local.set $a3 (i32x4.add (local.get $a3)
          (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $w)) (v128.load offset=48 (local.get $q)))))
        (local.set $q (i32.add (local.get $q) (i32.const 64)))
        (local.set $p (i32.add (local.get $p) (i32.const 32)))
        (br $steps)))
    (if (i32.lt_u (local.get $p) (local.get $end))
      (then
        (local.set $v (v128.load (local.get $p)))
        (local.set $a0 (i32x4.add (local.get $a0)
          (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $v)) (v128.load (local.get $q)))))
        (local.set $a1 (i32x4.add (local.get $a1)
          (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $v)) (v128.load offset=16 (local.get $q)))))
        (local.set $q (i32.add (local.get $q) (i32.const 32)))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))))
    (local.set $a0 (i32x4.add (i32x4.add (local.get $a0) (local.get $a1)) (i32x4.add (local.get $a2) (local.get $a3))))
    (f32.mul
      (f32.convert_i32_s (i32.add
        (i32.add (i32x4.extract_lane 0 (local.get $a0)) (i32x4.extract_lane 1 (local.get $a0)))
        (i32.add (i32x4.extract_lane 2 (local.get $a0)) (i32x4.extract_lane 3 (local.get $a0)))))
      (f32.mul (f32.load (local.get $p)) (f32.load (local.get $q)))))

  ;; scan, over codes: row stride $stride, codes $stride - 16 bytes.
  (func (export "scan_i8") (param $q i32) (param $p i32) (param $stride i32) (param $n i32) (param $out i32)
    (local $end i32) (local $len i32)
    (local.set $len (i32.sub (local.get $stride) (i32.const 16)))
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $n) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (f32.store (local.get $out) (call $dot_i8 (local.get $q) (local.get $p) (local.get $len)))
        (local.set $p (i32.add (local.get $p) (local.get $stride)))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (br $next))))

  ;; scan_multi, over codes: query j at $q + j * $qstride.
  (func (export "scan_multi_i8") (param $q i32) (param $nq i32) (param $p i32) (param $stride i32)
                                 (param $n i32) (param $out i32) (param $outStride i32) (param $block i32) (param $qstride i32)
    (local $b i32) (local $bend i32) (local $j i32) (local $qj i32) (local $pi i32) (local $o i32) (local $oend i32) (local $len i32)
    (local.set $len (i32.sub (local.get $stride) (i32.const 16)))
    (block $blocks_done
      (loop $blocks
        (br_if $blocks_done (i32.ge_u (local.get $b) (local.get $n)))
        (local.set $bend (i32.add (local.get $b) (local.get $block)))
        (if (i32.gt_u (local.get $bend) (local.get $n)) (then (local.set $bend (local.get $n))))
        (local.set $j (i32.const 0))
        (block $queries_done
          (loop $queries
            (br_if $queries_done (i32.ge_u (local.get $j) (local.get $nq)))
            (local.set $qj (i32.add (local.get $q) (i32.mul (local.get $j) (local.get $qstride))))
            (local.set $pi (i32.add (local.get $p) (i32.mul (local.get $b) (local.get $stride))))
            (local.set $o (i32.add (local.get $out)
              (i32.shl (i32.add (i32.mul (local.get $j) (local.get $outStride)) (local.get $b)) (i32.const 2))))
            (local.set $oend (i32.add (local.get $o) (i32.shl (i32.sub (local.get $bend) (local.get $b)) (i32.const 2))))
            (block $rows_done
              (loop $rows
                (br_if $rows_done (i32.ge_u (local.get $o) (local.get $oend)))
                (f32.store (local.get $o) (call $dot_i8 (local.get $qj) (local.get $pi) (local.get $len)))
                (local.set $pi (i32.add (local.get $pi) (local.get $stride)))
                (local.set $o (i32.add (local.get $o) (i32.const 4)))
                (br $rows)))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $queries)))
        (local.set $b (local.get $bend))
        (br $blocks))))

  ;; gather, over codes.
  (func (export "gather_i8") (param $q i32) (param $base i32) (param $stride i32) (param $idx i32)
                             (param $n i32) (param $out i32)
    (local $end i32) (local $len i32)
    (local.set $len (i32.sub (local.get $stride) (i32.const 16)))
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $n) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (f32.store (local.get $out) (call $dot_i8 (local.get $q)
          (i32.add (local.get $base) (i32.mul (i32.load (local.get $idx)) (local.get $stride)))
          (local.get $len)))
        (local.set $idx (i32.add (local.get $idx) (i32.const 4)))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (br $next))))

  ;; The first level, a bit per dimension (see store/vector-codes.ts), in blocks of 32 rows
  ;; (FastScan, as Faiss and RaBitQ lay out their codes): per group of 4 dimensions, 16 bytes
  ;; whose byte t holds row t's 4 bits in its low nibble and row t + 16's in its high one; after
  ;; the groups, the block's factors (f32 x 32), its counts of bits set (i32 x 32), its a (f32 x
  ;; 32) and 128 zero bytes. A row's `stride` (its bits, then 16 bytes) times 32 is a block. A
  ;; query is, per group, a table of 16 bytes: entry v is the sum of the 4-bit query codes u of
  ;; the group's dimensions whose bit is set in v (at most 60, exact); then Δ, lo (f32), Σu
  ;; and D (i32). So W = Σ u over a row's set bits is one swizzle per group for 16 rows, where a
  ;; row at a time took 4 ands and 4 popcounts (each several instructions on x64) per 128 bits.

  ;; The estimates of 4 rows from their W (i32s), as the row-at-a-time kernel computed each:
  ;; factor x (Δ (2W - Σu) + lo (2 set - D)); $t is the query's trailer, $f the rows' factors.
  (func $estimate4 (param $w v128) (param $t i32) (param $f i32) (result v128)
    (f32x4.mul (v128.load (local.get $f))
      (f32x4.add
        (f32x4.mul (f32x4.splat (f32.load (local.get $t)))
          (f32x4.convert_i32x4_s (i32x4.sub (i32x4.shl (local.get $w) (i32.const 1))
            (i32x4.splat (i32.load offset=8 (local.get $t))))))
        (f32x4.mul (f32x4.splat (f32.load offset=4 (local.get $t)))
          (f32x4.convert_i32x4_s (i32x4.sub (i32x4.shl (v128.load offset=128 (local.get $f)) (i32.const 1))
            (i32x4.splat (i32.load offset=12 (local.get $t)))))))))

  ;; The 32 estimates of the block at $p into f32s at $out; $groups (a multiple of 4) groups.
  ;; Four groups' lookups are summed in u8 lanes (at most 240), then into u16 lanes as Faiss
  ;; does: a += the bytes as u16 (even row + 256 x odd row, modulo 2^16), b += the odd rows
  ;; (u16 >> 8), and even = a - 256 b. A row's W is at most 15 D, so D <= 4,368 (matrix.ts).
  (func $block_bits (param $q i32) (param $p i32) (param $groups i32) (param $out i32)
    (local $end i32) (local $c v128) (local $l v128) (local $s0 v128) (local $s1 v128)
    (local $a0 v128) (local $b0 v128) (local $a1 v128) (local $b1 v128) (local $even v128) (local $r v128)
    (local.set $end (i32.add (local.get $p) (i32.shl (local.get $groups) (i32.const 4))))
    (block $done
      (loop $groups4
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $c (v128.load (local.get $p)))
        (local.set $l (v128.load (local.get $q)))
        (local.set $s0 (i8x16.swizzle (local.get $l) (v128.and (local.get $c) (v128.const i8x16 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15))))
        (local.set $s1 (i8x16.swizzle (local.get $l) (v128.and (i16x8.shr_u (local.get $c) (i32.const 4)) (v128.const i8x16 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15))))
        (local.set $c (v128.load offset=16 (local.get $p)))
        (local.set $l (v128.load offset=16 (local.get $q)))
        (local.set $s0 (i8x16.add (local.get $s0) (i8x16.swizzle (local.get $l) (v128.and (local.get $c) (v128.const i8x16 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15)))))
        (local.set $s1 (i8x16.add (local.get $s1) (i8x16.swizzle (local.get $l) (v128.and (i16x8.shr_u (local.get $c) (i32.const 4)) (v128.const i8x16 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15)))))
        (local.set $c (v128.load offset=32 (local.get $p)))
        (local.set $l (v128.load offset=32 (local.get $q)))
        (local.set $s0 (i8x16.add (local.get $s0) (i8x16.swizzle (local.get $l) (v128.and (local.get $c) (v128.const i8x16 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15)))))
        (local.set $s1 (i8x16.add (local.get $s1) (i8x16.swizzle (local.get $l) (v128.and (i16x8.shr_u (local.get $c) (i32.const 4)) (v128.const i8x16 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15)))))
        (local.set $c (v128.load offset=48 (local.get $p)))
        (local.set $l (v128.load offset=48 (local.get $q)))
        (local.set $s0 (i8x16.add (local.get $s0) (i8x16.swizzle (local.get $l) (v128.and (local.get $c) (v128.const i8x16 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15)))))
        (local.set $s1 (i8x16.add (local.get $s1) (i8x16.swizzle (local.get $l) (v128.and (i16x8.shr_u (local.get $c) (i32.const 4)) (v128.const i8x16 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15)))))
        (local.set $a0 (i16x8.add (local.get $a0) (local.get $s0)))
        (local.set $b0 (i16x8.add (local.get $b0) (i16x8.shr_u (local.get $s0) (i32.const 8))))
        (local.set $a1 (i16x8.add (local.get $a1) (local.get $s1)))
        (local.set $b1 (i16x8.add (local.get $b1) (i16x8.shr_u (local.get $s1) (i32.const 8))))
        (local.set $p (i32.add (local.get $p) (i32.const 64)))
        (local.set $q (i32.add (local.get $q) (i32.const 64)))
        (br $groups4)))
    ;; $q is at the query's trailer and $p at the block's factors. Rows 0-15, then 16-31: even
    ;; rows and odd rows interleaved back into order, 8 rows a vector, then 4 rows an i32x4.
    (local.set $even (i16x8.sub (local.get $a0) (i16x8.shl (local.get $b0) (i32.const 8))))
    (local.set $r (i8x16.shuffle 0 1 16 17 2 3 18 19 4 5 20 21 6 7 22 23 (local.get $even) (local.get $b0)))
    (v128.store (local.get $out) (call $estimate4 (i32x4.extend_low_i16x8_u (local.get $r)) (local.get $q) (local.get $p)))
    (v128.store offset=16 (local.get $out) (call $estimate4 (i32x4.extend_high_i16x8_u (local.get $r)) (local.get $q) (i32.add (local.get $p) (i32.const 16))))
    (local.set $r (i8x16.shuffle 8 9 24 25 10 11 26 27 12 13 28 29 14 15 30 31 (local.get $even) (local.get $b0)))
    (v128.store offset=32 (local.get $out) (call $estimate4 (i32x4.extend_low_i16x8_u (local.get $r)) (local.get $q) (i32.add (local.get $p) (i32.const 32))))
    (v128.store offset=48 (local.get $out) (call $estimate4 (i32x4.extend_high_i16x8_u (local.get $r)) (local.get $q) (i32.add (local.get $p) (i32.const 48))))
    (local.set $even (i16x8.sub (local.get $a1) (i16x8.shl (local.get $b1) (i32.const 8))))
    (local.set $r (i8x16.shuffle 0 1 16 17 2 3 18 19 4 5 20 21 6 7 22 23 (local.get $even) (local.get $b1)))
    (v128.store offset=64 (local.get $out) (call $estimate4 (i32x4.extend_low_i16x8_u (local.get $r)) (local.get $q) (i32.add (local.get $p) (i32.const 64))))
    (v128.store offset=80 (local.get $out) (call $estimate4 (i32x4.extend_high_i16x8_u (local.get $r)) (local.get $q) (i32.add (local.get $p) (i32.const 80))))
    (local.set $r (i8x16.shuffle 8 9 24 25 10 11 26 27 12 13 28 29 14 15 30 31 (local.get $even) (local.get $b1)))
    (v128.store offset=96 (local.get $out) (call $estimate4 (i32x4.extend_low_i16x8_u (local.get $r)) (local.get $q) (i32.add (local.get $p) (i32.const 96))))
    (v128.store offset=112 (local.get $out) (call $estimate4 (i32x4.extend_high_i16x8_u (local.get $r)) (local.get $q) (i32.add (local.get $p) (i32.const 112)))))

  ;; scan, over bits: $p is a block's start, and every block the $n rows touch is written
  ;; whole, so $out has room for $n rounded up to 32.
  (func (export "scan_bits") (param $q i32) (param $p i32) (param $stride i32) (param $n i32) (param $out i32)
    (local $end i32) (local $groups i32) (local $block i32)
    (local.set $groups (i32.shl (i32.sub (local.get $stride) (i32.const 16)) (i32.const 1)))
    (local.set $block (i32.shl (local.get $stride) (i32.const 5)))
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $n) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (call $block_bits (local.get $q) (local.get $p) (local.get $groups) (local.get $out))
        (local.set $p (i32.add (local.get $p) (local.get $block)))
        (local.set $out (i32.add (local.get $out) (i32.const 128)))
        (br $next))))

  ;; scan_multi, over bits: query j at $q + j * $qstride, $block a multiple of 32, and as
  ;; scan_bits, each query's $n scores rounded up to 32.
  (func (export "scan_multi_bits") (param $q i32) (param $nq i32) (param $p i32) (param $stride i32)
                                   (param $n i32) (param $out i32) (param $outStride i32) (param $block i32) (param $qstride i32)
    (local $b i32) (local $bend i32) (local $j i32) (local $qj i32) (local $pi i32) (local $o i32) (local $oend i32) (local $groups i32)
    (local.set $groups (i32.shl (i32.sub (local.get $stride) (i32.const 16)) (i32.const 1)))
    (block $blocks_done
      (loop $blocks
        (br_if $blocks_done (i32.ge_u (local.get $b) (local.get $n)))
        (local.set $bend (i32.add (local.get $b) (local.get $block)))
        (if (i32.gt_u (local.get $bend) (local.get $n)) (then (local.set $bend (local.get $n))))
        (local.set $j (i32.const 0))
        (block $queries_done
          (loop $queries
            (br_if $queries_done (i32.ge_u (local.get $j) (local.get $nq)))
            (local.set $qj (i32.add (local.get $q) (i32.mul (local.get $j) (local.get $qstride))))
            (local.set $pi (i32.add (local.get $p) (i32.mul (local.get $b) (local.get $stride))))
            (local.set $o (i32.add (local.get $out)
              (i32.shl (i32.add (i32.mul (local.get $j) (local.get $outStride)) (local.get $b)) (i32.const 2))))
            (local.set $oend (i32.add (local.get $o) (i32.shl (i32.sub (local.get $bend) (local.get $b)) (i32.const 2))))
            (block $rows_done
              (loop $rows
                (br_if $rows_done (i32.ge_u (local.get $o) (local.get $oend)))
                (call $block_bits (local.get $qj) (local.get $pi) (local.get $groups) (local.get $o))
                (local.set $pi (i32.add (local.get $pi) (i32.shl (local.get $stride) (i32.const 5))))
                (local.set $o (i32.add (local.get $o) (i32.const 128)))
                (br $rows)))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $queries)))
        (local.set $b (local.get $bend))
        (br $blocks))))

  ;; gather, over bits: the block of each row is scored whole, into the 128 bytes after the
  ;; query, unless it is the block of the row before (sorted rows share their blocks).
  (func (export "gather_bits") (param $q i32) (param $base i32) (param $stride i32) (param $idx i32)
                               (param $n i32) (param $out i32)
    (local $end i32) (local $groups i32) (local $scratch i32) (local $row i32) (local $last i32)
    (local.set $groups (i32.shl (i32.sub (local.get $stride) (i32.const 16)) (i32.const 1)))
    (local.set $scratch (i32.add (local.get $q) (i32.add (i32.shl (local.get $groups) (i32.const 4)) (i32.const 16))))
    (local.set $last (i32.const -1))
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $n) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (local.set $row (i32.load (local.get $idx)))
        (if (i32.ne (i32.shr_u (local.get $row) (i32.const 5)) (local.get $last))
          (then
            (local.set $last (i32.shr_u (local.get $row) (i32.const 5)))
            (call $block_bits (local.get $q)
              (i32.add (local.get $base) (i32.mul (local.get $last) (i32.shl (local.get $stride) (i32.const 5))))
              (local.get $groups) (local.get $scratch))))
        (f32.store (local.get $out)
          (f32.load (i32.add (local.get $scratch) (i32.shl (i32.and (local.get $row) (i32.const 31)) (i32.const 2)))))
        (local.set $idx (i32.add (local.get $idx) (i32.const 4)))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (br $next))))

  ;; Sum of the f32s in [$p, $p + $len), $len a multiple of 64: the bandwidth probe.
  (func (export "sum") (param $p i32) (param $len i32) (result f32)
    (local $end i32) (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local.set $end (i32.add (local.get $p) (local.get $len)))
    (loop $next
      (local.set $a0 (f32x4.add (local.get $a0) (v128.load (local.get $p))))
      (local.set $a1 (f32x4.add (local.get $a1) (v128.load offset=16 (local.get $p))))
      (local.set $a2 (f32x4.add (local.get $a2) (v128.load offset=32 (local.get $p))))
      (local.set $a3 (f32x4.add (local.get $a3) (v128.load offset=48 (local.get $p))))
      (br_if $next (i32.lt_u (local.tee $p (i32.add (local.get $p) (i32.const 64))) (local.get $end))))
    (local.set $a0 (f32x4.add (f32x4.add (local.get $a0) (local.get $a1)) (f32x4.add (local.get $a2) (local.get $a3))))
    (f32.add
      (f32.add (f32x4.extract_lane 0 (local.get $a0)) (f32x4.extract_lane 1 (local.get $a0)))
      (f32.add (f32x4.extract_lane 2 (local.get $a0)) (f32x4.extract_lane 3 (local.get $a0)))))
)
