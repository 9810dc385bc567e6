// A fragment of PDF text placed on the page (runs merged along one baseline), and the measures
// the layout takes over fragments: medians and quantiles of sizes and edges, vertical extents.

export interface Fragment {
  text: string;
  x0: number;
  x1: number;
  y: number;
  size: number;
  top: number;
  bottom: number;
  /** An explicit space ended the fragment (the next one on its line is a new word). */
  spaceAfter: boolean;
}

export function median(values: number[]): number {
  return quantile(values, 0.5);
}

export function quantile(values: number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

export function maxOf(frags: Fragment[], key: 'bottom' | 'top'): number {
  return Math.max(...frags.map((f) => f[key]));
}

export function minOf(frags: Fragment[], key: 'bottom' | 'top'): number {
  return Math.min(...frags.map((f) => f[key]));
}
