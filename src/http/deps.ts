// What the application and its routes are built from: the types both sides import, so
// that routes need nothing from app.ts.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyPluginAsync,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { Config } from '../config.js';
import type { Services } from '../services.js';
import type { KeyResolver } from '../workspaces/keys.js';
import type { Metrics } from './metrics.js';
import type { RateLimiter } from './rate-limit.js';

export interface AppDeps {
  config: Config;
  /** The services routes call, built once by runtime.ts. */
  services: Services;
  keys: KeyResolver;
  rateLimiter: RateLimiter | null;
  /** Counts requests and serves GET /metrics; null when FOLIO_METRICS_TOKEN is unset. */
  metrics?: Metrics | null;
  /** false silences request logs (tests); otherwise pino at config.logLevel. */
  logger?: boolean;
}

/** The app as routes see it: each route's request and reply types follow its TypeBox schemas. */
export type TypedApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/** A plugin of routes, registered by `register` on the typed app. */
export function routePlugin(register: (app: TypedApp) => void | Promise<void>): FastifyPluginAsync {
  return async (plugin) => register(plugin.withTypeProvider<TypeBoxTypeProvider>());
}
