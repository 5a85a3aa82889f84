/**
 * `GET /.well-known/openid-configuration` (OIDC Discovery 1.0 §3, RFC 8414, DESIGN §4.10) and
 * `GET /api/auth/jwks` (RFC 7517). Both are fetched by every relying party and verifier, so
 * each is served from a serialised body kept until it changes (issue 9: ≥ 15,000 requests/s):
 * the discovery document per issuer (only known after listening when the port is picked by the
 * system), the JWKS per state of the key table.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { JWK } from 'jose';
import type { Statement } from 'better-sqlite3';
import type { AppContext } from '../context.js';
import { engineOf, sqliteGateHeld } from '../db/store.js';
import { JWKS_MAX_AGE_SECONDS, keyWriteCount, onKeyWrite, publishedJwks, readPublishedKeys, type KeyRing } from './keys.js';
import { SIGNING_ALGS } from './signing-algorithms.js';
import { SUPPORTED_SCOPES } from './scopes.js';
import { RESPONSE_MODES } from './authorize/response-mode.js';
import { CLAIMS_SUPPORTED } from './claims/standard.js';
import { ACR_VALUES } from '../accounts/second-factor/factors.js';
import { GRANT_TYPES } from '../applications/schemas.js';
import { CORS_HEADERS } from './cors.js';
import { JSON_SECURITY_HEADERS } from '../http/security-headers.js';

/** How often the JWKS looks for a key another process wrote. */
const STORE_CHECK_MS = 1_000;

const AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'];

export function discoveryDocument(issuer: string) {
  const at = (path: string) => `${issuer}${path}`;
  return {
    issuer,
    authorization_endpoint: at('/api/auth/oauth2/authorize'),
    token_endpoint: at('/api/auth/oauth2/token'),
    userinfo_endpoint: at('/api/auth/oauth2/userinfo'),
    jwks_uri: at('/api/auth/jwks'),
    revocation_endpoint: at('/api/auth/oauth2/revoke'),
    end_session_endpoint: at('/api/auth/oauth2/end-session'),
    device_authorization_endpoint: at('/api/auth/oauth2/device_authorization'),
    introspection_endpoint: at('/api/auth/oauth2/introspect'),
    scopes_supported: [...SUPPORTED_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: [...RESPONSE_MODES],
    grant_types_supported: [...GRANT_TYPES],
    subject_types_supported: ['public'],
    // Each application's tokens carry its own algorithm (RS256 unless it chose ES256 or EdDSA).
    id_token_signing_alg_values_supported: [...SIGNING_ALGS],
    token_endpoint_auth_methods_supported: AUTH_METHODS,
    revocation_endpoint_auth_methods_supported: AUTH_METHODS,
    // Only confidential clients may introspect (RFC 7662 §2.1: the caller must be authorized).
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    code_challenge_methods_supported: ['S256'],
    prompt_values_supported: ['none', 'login', 'consent', 'select_account'],
    claims_supported: [...CLAIMS_SUPPORTED],
    acr_values_supported: [...ACR_VALUES],
    authorization_response_iss_parameter_supported: true,
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    claims_parameter_supported: false,
  };
}

/**
 * The published key set, serialised once per state of `signing_keys`. The store is consulted
 * when this process wrote a key (`keyWriteCount`), when a retiring key's publication ends, and
 * otherwise at most once a second, for a rotation by another process (`gatehouse rotate-keys`;
 * the signing KeyRing only picks that key up after 5 s, so it is published before it signs).
 * Consulting first reads two connection counters in one prepared statement: SQLite's
 * `total_changes()` (rows this connection wrote) and `data_version` (commits by other
 * connections). Only when either moved is the key table itself read (kid, retired_at,
 * expires_at of its handful of rows), and only when that state differs is the set rebuilt.
 * Which keys are published stays decided by `publishedJwks` alone.
 */
export class JwksBody {
  private readonly counters: Statement<[], string>;
  private readonly state: Statement<[], [string, number | null, number | null]>;
  private body = '';
  private bodyCounters: string | undefined;
  private bodyState: string | undefined;
  /** When the next retiring key leaves the set (ms since the epoch). */
  private staleAt = Infinity;
  private seenWrites = -1;
  private checkedAt = 0;

  constructor(private readonly ctx: AppContext) {
    const sqlite = ctx.db.$client;
    this.counters = sqlite.prepare<[], string>("SELECT total_changes() || ':' || data_version FROM pragma_data_version").pluck();
    this.state = sqlite.prepare<[], [string, number | null, number | null]>('SELECT kid, retired_at, expires_at FROM signing_keys').raw();
  }

  current(): string {
    const now = this.ctx.clock.now();
    // Real time, not the context clock: this paces work, it decides nothing about validity.
    const checkedAgo = Date.now() - this.checkedAt;
    const writes = keyWriteCount();
    if (writes === this.seenWrites && checkedAgo >= 0 && checkedAgo < STORE_CHECK_MS && now.getTime() < this.staleAt) return this.body;
    // A transaction open elsewhere: its rows are not committed yet (a key it writes is looked at after it ends).
    if (this.body !== '' && sqliteGateHeld()) return this.body;
    this.seenWrites = writes;
    this.checkedAt = Date.now();
    const counters = this.counters.get()!;
    if (counters === this.bodyCounters && now.getTime() < this.staleAt) return this.body;
    const rows = this.state.all();
    const state = rows.join(';');
    this.bodyCounters = counters;
    if (state === this.bodyState && now.getTime() < this.staleAt) return this.body;
    this.body = JSON.stringify(publishedJwks(this.ctx.db, now));
    this.bodyState = state;
    this.staleAt = Math.min(Infinity, ...rows.map(([, , expiresAt]) => expiresAt ?? 0).filter((at) => at > now.getTime()));
    return this.body;
  }
}

/**
 * The published key set on PostgreSQL, where other instances rotate keys too and reads are
 * asynchronous: the set is kept in memory and read again in the background once it is a second
 * old, so a key rotated by another instance is published here within about a second; a key
 * written by this process is read before the write returns (`onKeyWrite`). Each key is kept with
 * the store-clock moment it leaves the set, so a retiring key goes at that moment, as on SQLite.
 * `ready()` reads it the first time.
 */
export class PolledJwksBody {
  private keys: Array<{ jwk: JWK; until: number }> = [];
  private body = '';
  /** When the next key in `keys` leaves the set (store clock). */
  private staleAt = Infinity;
  private readAt = 0;
  private reading: Promise<void> | undefined;

  constructor(private readonly ctx: AppContext) {
    // A key this process writes is served as soon as the write returns (the admin API's rotate).
    onKeyWrite(ctx.db, () => this.read(true));
  }

  ready(): Promise<void> {
    return this.read();
  }

  current(): string {
    if (Date.now() - this.readAt >= STORE_CHECK_MS) {
      // On failure (the database unreachable a moment) the last body stays served; the next request tries again.
      this.read().catch(() => {});
    }
    if (this.ctx.clock.now().getTime() >= this.staleAt) this.serialise();
    return this.body;
  }

  private serialise(): void {
    const now = this.ctx.clock.now().getTime();
    const live = this.keys.filter((k) => k.until > now);
    this.body = JSON.stringify({ keys: live.map((k) => k.jwk) });
    this.staleAt = Math.min(Infinity, ...live.map((k) => k.until));
  }

  /** `again`: a read already under way may predate a write; wait for it, then read once more. */
  private async read(again = false): Promise<void> {
    if (again && this.reading) await this.reading.catch(() => {});
    this.reading ??= (async () => {
      try {
        this.keys = await readPublishedKeys(this.ctx.db, this.ctx.clock.now());
        this.readAt = Date.now();
        this.serialise();
      } finally {
        this.reading = undefined;
      }
    })();
    return this.reading;
  }
}

const DISCOVERY_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'public, max-age=300' };
// The announced cache lifetime: a rotated-in key signs only after it has passed (oauth/keys.ts).
const JWKS_HEADERS = { 'content-type': 'application/jwk-set+json; charset=utf-8', 'cache-control': `public, max-age=${JWKS_MAX_AGE_SECONDS}` };

/**
 * Each document is registered twice with the same headers and body: as a Fastify route (for
 * `inject`, query strings and anything the early path passes on) and as an early answer of the
 * Node server, which also adds what the global hooks would (security headers, CORS).
 */
export const discoveryRoutes: FastifyPluginAsync<{ keys: KeyRing }> = async (app, { keys }) => {
  const { ctx } = app;
  let discovery = { issuer: '', body: '' };
  const discoveryBody = () => {
    if (discovery.issuer !== ctx.config.issuer) {
      discovery = { issuer: ctx.config.issuer, body: JSON.stringify(discoveryDocument(ctx.config.issuer)) };
    }
    return discovery.body;
  };
  await keys.ensure();
  let jwks: { current(): string };
  if (engineOf(ctx.db) === 'postgres') {
    const polled = new PolledJwksBody(ctx);
    await polled.ready();
    jwks = polled;
  } else {
    jwks = new JwksBody(ctx);
  }
  const jwksBody = () => jwks.current();
  for (const [path, headers, body] of [
    ['/.well-known/openid-configuration', DISCOVERY_HEADERS, discoveryBody],
    // RFC 8414's name for the same metadata, where plain OAuth clients look for it.
    ['/.well-known/oauth-authorization-server', DISCOVERY_HEADERS, discoveryBody],
    ['/api/auth/jwks', JWKS_HEADERS, jwksBody],
  ] as const) {
    app.get(path, { schema: { hide: true } }, (_request, reply) => {
      reply.headers(headers).send(body());
    });
    app.earlyAnswers.add(path, { ...JSON_SECURITY_HEADERS, ...CORS_HEADERS, ...headers }, body);
  }
};
