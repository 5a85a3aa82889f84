/**
 * `GET /.well-known/openid-configuration` (OIDC Discovery 1.0 §3, RFC 8414, DESIGN §4.10) and
 * `GET /api/auth/jwks` (RFC 7517). Both are fetched by every relying party and verifier, so
 * each is served from a serialised body kept until it changes (issue 9: ≥ 15,000 requests/s):
 * the discovery document per issuer (only known after listening when the port is picked by the
 * system), the JWKS per state of the key table.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Statement } from 'better-sqlite3';
import type { AppContext } from '../context.js';
import { publishedJwks, SIGNING_ALG, type KeyRing } from './keys.js';
import { SUPPORTED_SCOPES } from './scopes.js';

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
    scopes_supported: [...SUPPORTED_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [SIGNING_ALG],
    token_endpoint_auth_methods_supported: AUTH_METHODS,
    revocation_endpoint_auth_methods_supported: AUTH_METHODS,
    code_challenge_methods_supported: ['S256'],
    prompt_values_supported: ['none', 'login'],
    claims_supported: ['iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'sid', 'name', 'email', 'email_verified'],
    authorization_response_iss_parameter_supported: true,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    claims_parameter_supported: false,
  };
}

/**
 * The published key set, serialised once per state of `signing_keys`. A request first reads two
 * connection counters in one prepared statement (about 2 µs): SQLite's `total_changes()` (rows
 * this process wrote: an in-process rotation) and `data_version` (commits by other processes:
 * `gatehouse rotate-keys`). Only when either moved is the key table itself read (kid, retired_at,
 * expires_at of its handful of rows), and only when that state differs is the set rebuilt; it is
 * also rebuilt when a retiring key's publication ends. Which keys are published stays decided by
 * `publishedJwks` alone.
 */
export class JwksBody {
  private readonly counters: Statement<[], string>;
  private readonly state: Statement<[], [string, number | null, number | null]>;
  private body = '';
  private bodyCounters: string | undefined;
  private bodyState: string | undefined;
  /** When the next retiring key leaves the set (ms since the epoch). */
  private staleAt = Infinity;

  constructor(private readonly ctx: AppContext) {
    const sqlite = ctx.db.$client;
    this.counters = sqlite.prepare<[], string>("SELECT total_changes() || ':' || data_version FROM pragma_data_version").pluck();
    this.state = sqlite.prepare<[], [string, number | null, number | null]>('SELECT kid, retired_at, expires_at FROM signing_keys').raw();
  }

  current(): string {
    const counters = this.counters.get()!;
    const now = this.ctx.clock.now();
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

const DISCOVERY_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'public, max-age=300' };
// Short cache: after a rotation the new key signs at once, and verifiers refetch on an unknown kid.
const JWKS_HEADERS = { 'content-type': 'application/jwk-set+json; charset=utf-8', 'cache-control': 'public, max-age=60' };

export const discoveryRoutes: FastifyPluginAsync<{ keys: KeyRing }> = async (app, { keys }) => {
  const { ctx } = app;
  let discovery = { issuer: '', body: '' };
  app.get('/.well-known/openid-configuration', { schema: { hide: true } }, async (_request, reply) => {
    if (discovery.issuer !== ctx.config.issuer) {
      discovery = { issuer: ctx.config.issuer, body: JSON.stringify(discoveryDocument(ctx.config.issuer)) };
    }
    return reply.headers(DISCOVERY_HEADERS).send(discovery.body);
  });
  await keys.ensure();
  const jwks = new JwksBody(ctx);
  app.get('/api/auth/jwks', { schema: { hide: true } }, (_request, reply) => {
    reply.headers(JWKS_HEADERS).send(jwks.current());
  });
};
