// Extractions: schema-checked definitions, runs as tasks (service.ts, run.ts), the offline
// schema-guided extractor (offline.ts with labels.ts, layout.ts, values.ts) and extraction
// with a language model (llm.ts).
export { checkExtractionSchema, describeSchema, strictSchema, validationErrors, type FieldSpec } from './schema.js';
export { extractOffline, type ExtractedRecord, type ExtractionInput } from './offline.js';
export { ExtractionFailure, extractWithLlm, type LlmExtractionOptions } from './llm.js';
export { extractionTasks, runExtractionTask, type ExtractionDeps, type RunExtractionPayload } from './run.js';
export * from './service.js';
