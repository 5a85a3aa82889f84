/**
 * What every feature module receives: the store, configuration, clock, a few shared services, and
 * the plugin API (the hooks the core announces on and the registries plugins fill: plugin-api/).
 * Built once by `buildApp` and attached to the Fastify instance as `app.ctx`.
 */
import type { AddressInfo } from 'node:net';
import type { FastifyPluginAsync } from 'fastify';
import type { Db } from './db/client.js';
import type { Config } from './config.js';
import type { Clock } from './util/clock.js';
import type { AdminTokenStore } from './http/admin-token.js';
import type { Metrics } from './plugin-api/metrics.js';
import type { Hooks } from './plugin-api/hooks.js';
import type { Registries } from './plugin-api/registries.js';
import type { LanTrustHooks } from './http/lan-trust-wire.js';

export interface AppContext {
  db: Db;
  config: Config;
  clock: Clock;
  adminToken: AdminTokenStore;
  /** The sockets this server listens on (none before listen, or under `inject`); webhooks may not target them. */
  listenAddresses: () => AddressInfo[];
  /** Called after a transaction wrote webhook outbox rows, so the worker looks sooner. */
  wakeWebhooks: () => void;
  /** Called when a big delete has rows left after its inline batches (data-lifecycle/purge.ts). */
  wakePurger: () => void;
  /**
   * The claims of one of our own access tokens, signed with a published key, for this issuer and
   * unexpired (oauth/access-tokens.ts `readAccessToken`, set by the OAuth plugin; revocation is the
   * caller's check). The admin API reads panel tokens through it (administrators/panel-access.ts).
   */
  readAccessToken: (token: string) => Promise<Readonly<Record<string, unknown>> | undefined>;
  /** Prometheus counters and state gauges (plugin-api/metrics.ts): features count here, `GET /metrics` shows them. */
  metrics: Metrics;
  /** What the core announces (plugin-api/hooks.ts): plugins listen. */
  hooks: Hooks;
  /** What plugins add (plugin-api/registries.ts): the core reads. */
  registries: Registries;
  /** LAN trust (the trust page, set-up trust lines, ACME state): filled by the trust plugin (http/lan-trust-wire.ts). */
  lanTrust: LanTrustHooks;
  /**
   * Serves a new certificate from the next TLS handshake on, without a restart (an ACME
   * certificate, a renewed local one). buildApp swaps the HTTPS listener's; main.ts also hands it
   * to the LDAP listener. A no-op without HTTPS.
   */
  serveCertificate: (material: { key: string; cert: string }) => void;
}

/** What `buildApp` passes every feature plugin (server/features.ts lists them). */
export interface FeatureOptions {
  /** Whether background workers (webhook delivery, clean-up, schedules) should run. */
  startWorkers: boolean;
}

/**
 * A protocol plugin (plugin-api/index.ts; docs/architecture.md, "How to add a protocol plugin"):
 * `setup` listens to `ctx.hooks` and fills `ctx.registries` once, before any route is registered,
 * and returns the plugin's own routes (a Fastify plugin registered with the features), if it has
 * any. server/features.ts lists the plugins.
 */
export interface GatehousePlugin {
  name: string;
  setup(ctx: AppContext): FastifyPluginAsync<FeatureOptions> | void;
}

declare module 'fastify' {
  interface FastifyInstance {
    ctx: AppContext;
  }
}
