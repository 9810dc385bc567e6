// Long synchronous loops cut into slices, so that other requests (/health included) are
// answered between them.
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Milliseconds a slice may run before the event loop takes a turn. */
const SLICE_MS = 10;

/** `items.map(fn)`, with a turn of the event loop whenever a slice has run SLICE_MS. */
export async function mapInSlices<T, R>(items: readonly T[], fn: (item: T, index: number) => R): Promise<R[]> {
  const out: R[] = [];
  let sliceStart = performance.now();
  for (let i = 0; i < items.length; i++) {
    out.push(fn(items[i], i));
    if (performance.now() - sliceStart > SLICE_MS) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
  return out;
}
