// Columns of a PDF page: a gutter (a vertical gap shared by many lines, prose on both sides)
// splits the fragments into a left and a right column, read left before right, recursively,
// between full-width fragments such as titles that cut the columns into bands.
import { maxOf, median, minOf, quantile, type Fragment } from './pdf-fragments.js';

const MAX_DEPTH = 3;

/** Fragments in reading order, as regions each laid out on its own. */
export function columns(frags: Fragment[], depth: number): Fragment[][] {
  if (depth >= MAX_DEPTH || frags.length < 6) return [frags];
  const gutter = findGutter(frags);
  if (!gutter) return [frags];
  const { left, right, spanning } = gutter;
  spanning.sort((a, b) => a.top - b.top);
  // Full-width fragments cut the columns into bands; each band reads left column, then right.
  const regions: Fragment[][] = [];
  let start = 0;
  const bandOf = (f: Fragment) => {
    const mid = (f.top + f.bottom) / 2;
    let band = 0;
    while (band < spanning.length && (spanning[band].top + spanning[band].bottom) / 2 < mid) band++;
    return band;
  };
  const bandsLeft = groupBy(left, bandOf);
  const bandsRight = groupBy(right, bandOf);
  for (let band = 0; band <= spanning.length; band++) {
    const l = bandsLeft.get(band) ?? [];
    const r = bandsRight.get(band) ?? [];
    if (l.length) regions.push(...columns(l, depth + 1));
    if (r.length) regions.push(...columns(r, depth + 1));
    if (band < spanning.length) {
      // Consecutive spanning fragments (no column text between them) form one region.
      const next = band + 1;
      const nextHasColumns = (bandsLeft.get(next)?.length ?? 0) + (bandsRight.get(next)?.length ?? 0) > 0;
      if (nextHasColumns || next === spanning.length) {
        regions.push(spanning.slice(start, next));
        start = next;
      }
    }
  }
  return regions;
}

function groupBy<T>(items: T[], key: (item: T) => number): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

interface Gutter {
  left: Fragment[];
  right: Fragment[];
  spanning: Fragment[];
}

/**
 * A vertical gap shared by many lines, with column text on both sides: the right column's
 * fragments start at one x (a left-aligned column), the left column's end before it, few
 * fragments cross it, and both sides hold several full-width lines (prose, not table cells).
 */
function findGutter(frags: Fragment[]): Gutter | null {
  const x0 = Math.min(...frags.map((f) => f.x0));
  const x1 = Math.max(...frags.map((f) => f.x1));
  const width = x1 - x0;
  const size = median(frags.map((f) => f.size));
  if (width < 20 * size) return null;

  // Candidate column starts: x positions where several fragments start.
  const starts = new Map<number, number>();
  for (const f of frags) {
    if (f.x0 < x0 + 0.15 * width || f.x0 > x0 + 0.85 * width) continue;
    const key = Math.round(f.x0 / 2) * 2;
    starts.set(key, (starts.get(key) ?? 0) + 1);
  }
  let best: (Gutter & { score: number }) | null = null;
  for (const [start, count] of starts) {
    if (count < 3) continue;
    const c = Math.min(...frags.filter((f) => Math.abs(f.x0 - start) <= 2).map((f) => f.x0));
    const left: Fragment[] = [];
    const right: Fragment[] = [];
    const spanning: Fragment[] = [];
    for (const f of frags) {
      if (f.x0 >= c - 1) right.push(f);
      else if (f.x1 <= c + 1) left.push(f);
      else spanning.push(f);
    }
    if (left.length < 3 || right.length < 3) continue;
    if (spanning.length > Math.max(2, 0.3 * (left.length + right.length))) continue;
    // Most left lines stop well before the right column (a gap, not touching words).
    const edge = quantile(left.map((f) => f.x1), 0.9);
    if (c - edge < 0.5 * size) continue;
    const leftStart = Math.min(...left.map((f) => f.x0));
    const rightEnd = Math.max(...right.map((f) => f.x1));
    if (fullLines(left, edge - leftStart) < 3 || fullLines(right, rightEnd - c) < 3) continue;
    // Side by side, not one above the other.
    const overlap = Math.min(maxOf(left, 'bottom'), maxOf(right, 'bottom')) - Math.max(minOf(left, 'top'), minOf(right, 'top'));
    if (overlap < 3 * size) continue;
    const score = left.length + right.length - 3 * spanning.length;
    if (!best || score > best.score) best = { left, right, spanning, score };
  }
  return best;
}

/** How many fragments fill most of a column's width with several words. */
function fullLines(frags: Fragment[], width: number): number {
  let n = 0;
  for (const f of frags) if (f.x1 - f.x0 >= 0.6 * width && /\S\s+\S.*\s\S/.test(f.text)) n++;
  return n;
}
