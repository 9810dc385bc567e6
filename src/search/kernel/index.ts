export { VectorMatrix, type RowKind, type VectorMatrixOptions } from './matrix.js';
export { ScanPool, type ScanPoolOptions, type ScanQuery } from './pool.js';
export { topK, topKClamped } from './top-k.js';
