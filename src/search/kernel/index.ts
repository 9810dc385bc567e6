export { VectorMatrix, type VectorMatrixOptions } from './matrix.js';
export { ScanPool, type ScanPoolOptions } from './pool.js';
export { topK, topKClamped } from './top-k.js';
