/**
 * What every feature module receives: the store, configuration, clock and a few shared services.
 * Built once by `buildApp` and attached to the Fastify instance as `app.ctx`.
 */
import type { AddressInfo } from 'node:net';
import type { Db } from './db/client.js';
import type { Config } from './config.js';
import type { Clock } from './util/clock.js';
import type { AdminTokenStore } from './http/admin-token.js';
import type { CodeStore } from './oauth/authorize/code.js';
import type { Metrics } from './metrics/metrics.js';
import type { LanTrustHooks } from './http/lan-trust-wire.js';

export interface AppContext {
  db: Db;
  config: Config;
  clock: Clock;
  adminToken: AdminTokenStore;
  /** Live authorization codes: in memory, see oauth/authorize/code.ts. */
  codes: CodeStore;
  /** The sockets this server listens on (none before listen, or under `inject`); webhooks may not target them. */
  listenAddresses: () => AddressInfo[];
  /** Called after a transaction wrote webhook outbox rows, so the worker looks sooner. */
  wakeWebhooks: () => void;
  /** Called when a big delete has rows left after its inline batches (data-lifecycle/purge.ts). */
  wakePurger: () => void;
  /** The LDAP listener this process runs (server/ldap/server.ts, started by main.ts); null when it runs none. */
  ldapListener: () => LdapListenerStatus | null;
  /**
   * The claims of one of our own access tokens, signed with a published key, for this issuer and
   * unexpired (oauth/access-tokens.ts `readAccessToken`, set by the OAuth plugin; revocation is the
   * caller's check). The admin API reads panel tokens through it (administrators/panel-access.ts).
   */
  readAccessToken: (token: string) => Promise<Readonly<Record<string, unknown>> | undefined>;
  /** Prometheus counters and state gauges (metrics/metrics.ts): features count here, `GET /metrics` shows them. */
  metrics: Metrics;
  /** LAN trust (the trust page, set-up trust lines, ACME state): filled by the trust plugin (http/lan-trust-wire.ts). */
  lanTrust: LanTrustHooks;
  /**
   * Serves a new certificate from the next TLS handshake on, without a restart (an ACME
   * certificate, a renewed local one). buildApp swaps the HTTPS listener's; main.ts also hands it
   * to the LDAP listener. A no-op without HTTPS.
   */
  serveCertificate: (material: { key: string; cert: string }) => void;
}

/** What the control panel shows about a running LDAP listener (spec ldap.md). */
export interface LdapListenerStatus {
  url: string | null;
  ldapsUrl: string | null;
  startTls: boolean;
  baseDn: string | null;
  allowPlain: boolean;
  connections: number;
}

/** What `buildApp` passes every feature plugin (server/features.ts lists them). */
export interface FeatureOptions {
  /** Whether background workers (webhook delivery, clean-up, schedules) should run. */
  startWorkers: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    ctx: AppContext;
  }
}
