/**
 * What features count (docs/monitoring.md), as the core sees it: the metrics plugin
 * (server/metrics/metrics.ts, prom-client) implements it, and `GET /metrics` shows it. The core
 * counts sign-ins, tokens and requests and registers readers for its state gauges; a plugin makes
 * counters and gauges of its own (`gatehouse_forward_auth_checks_total`, next
 * `gatehouse_radius_requests_total`) in its setup, so no feature imports prom-client or the
 * metrics plugin.
 */

/** How a sign-in attempt ended. */
export type SignInResult =
  /** Signed in: a session was started (or raised to multi-factor). */
  | 'success'
  /** A wrong password, code or passkey (or an unknown address: the same answer). */
  | 'failure'
  /** Refused unchecked: the address or the person's second step is locked by the back-off. */
  | 'locked'
  /** The first factor was right; the sign-in now waits for the second step. */
  | 'second_factor_required';

/** What the attempt checked: the first factor, or the second step's method. */
export type SignInMethod = 'password' | 'passkey' | 'external' | 'totp' | 'recovery_code';

/** The core's state gauges: each read at scrape time by a reader a feature registers. */
export type StateGauge =
  | 'webhookBacklog'
  | 'backchannelLogoutBacklog'
  | 'sessionsActive'
  | 'databaseSize'
  | 'sweeperLastRun'
  | 'backupLastSuccess'
  | 'signingKeyAge'
  | 'tlsCertificateExpiry'
  | 'tlsCaExpiry';

/** A reader's answer: the value, or undefined when the gauge does not apply here (no sample is shown). */
export type StateReader = () => number | undefined | Promise<number | undefined>;

/** A counter a plugin made: `inc` with a value for each of its labels. */
export interface PluginCounter<L extends string> {
  inc(labels: Record<L, string>): void;
}

export interface Metrics {
  /** Counting on or off (the bench's switch, bench/refresh.ts); always on in service. */
  counting: boolean;
  signIn(result: SignInResult, method: SignInMethod): void;
  tokenIssued(grantType: string): void;
  /** `error`: the RFC 6749 §5.2 (or RFC 8628 §3.5) error code of the answer. */
  tokenError(error: string): void;
  /** One answered request: `route` is the path pattern (`/api/admin/applications/:id`), not the path. */
  requestDone(route: string, status: number, seconds: number): void;
  /** Registers the reader of a core state gauge (one per gauge; a later one replaces it). */
  readState(gauge: StateGauge, reader: StateReader): void;
  /** A plugin's own counter (`gatehouse_<plugin>_…_total`), made once in its setup. */
  counter<L extends string>(definition: { name: string; help: string; labelNames: readonly L[] }): PluginCounter<L>;
  /** A plugin's own gauge, read when scraped like the state gauges. */
  gauge(definition: { name: string; help: string }, reader: StateReader): void;
  /** The Prometheus text exposition of every metric (`GET /metrics`), and its content type. */
  render(): Promise<string>;
  readonly contentType: string;
  /** Stops what runs in the background (the app is closing). */
  stop(): void;
}
