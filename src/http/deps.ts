// What the application and its routes are built from: the types both sides import, so
// that routes need nothing from app.ts.
import type { Config } from '../config.js';
import type { Services } from '../services.js';
import type { KeyResolver } from '../workspaces/keys.js';
import type { RateLimiter } from './rate-limit.js';

export interface AppDeps {
  config: Config;
  /** The services routes call, built once by runtime.ts. */
  services: Services;
  keys: KeyResolver;
  rateLimiter: RateLimiter | null;
  /** false silences request logs (tests); otherwise pino at config.logLevel. */
  logger?: boolean;
}
