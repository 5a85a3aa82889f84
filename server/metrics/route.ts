/**
 * `GET /metrics`: the Prometheus text exposition (metrics.ts), for a scraper that presents
 * `Authorization: Bearer <GATEHOUSE_METRICS_TOKEN>` or connects from an address in
 * GATEHOUSE_METRICS_ALLOW (default: loopback only). Errors (problem+json, docs/monitoring.md):
 * - a bearer token that is not the metrics token → 401 `invalid_token`;
 * - no token, from an address not allowed → 401 `unauthorized` when a metrics token is set (with
 *   `WWW-Authenticate: Bearer`), else 403 `metrics_not_allowed`.
 * A request that came through a reverse proxy the server does not trust (X-Forwarded-For or
 * Forwarded present, GATEHOUSE_TRUST_PROXY unset) is not "from loopback" — the proxy is — so a
 * proxy on the same machine never opens the metrics to everyone it forwards.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { FeatureOptions, GatehousePlugin } from '../context.js';
import { bearerToken } from '../http/bearer-token.js';
import { forbidden, Problem, unauthorized } from '../http/problem.js';
import { addressList } from '../util/address-list.js';
import { safeEqual } from '../util/crypto.js';

export const METRICS_PATH = '/metrics';

const REALM = 'Bearer realm="gatehouse-metrics"';

const metricsRoute: FastifyPluginAsync<FeatureOptions> = async (app) => {
  const { ctx } = app;
  const { token, allow } = ctx.config.metrics;
  const allowed = addressList(allow);
  const trustsProxy = ctx.config.trustProxy.length > 0;

  const fromAllowedAddress = (request: FastifyRequest) =>
    (trustsProxy || (request.headers['x-forwarded-for'] === undefined && request.headers.forwarded === undefined)) && allowed.has(request.ip);

  const guard = async (request: FastifyRequest) => {
    const presented = bearerToken(request);
    if (presented !== undefined || request.headers.authorization !== undefined) {
      if (token !== undefined && presented !== undefined && safeEqual(presented, token)) return;
      throw new Problem(401, 'invalid_token', 'The bearer token is not the metrics token (GATEHOUSE_METRICS_TOKEN).', undefined, {
        'www-authenticate': `${REALM}, error="invalid_token"`,
      });
    }
    if (fromAllowedAddress(request)) return;
    if (token !== undefined) {
      throw unauthorized('Metrics need Authorization: Bearer <GATEHOUSE_METRICS_TOKEN> from this address.', 'unauthorized', REALM);
    }
    throw forbidden(
      'metrics_not_allowed',
      'Metrics are not served to this address: add it to GATEHOUSE_METRICS_ALLOW, or set GATEHOUSE_METRICS_TOKEN and scrape with it.',
    );
  };

  app.get(METRICS_PATH, { onRequest: guard, schema: { hide: true } }, async (_request, reply) => {
    const text = await ctx.metrics.render();
    return reply.header('content-type', ctx.metrics.contentType).header('cache-control', 'no-store').send(text);
  });
};

/**
 * Metrics as a protocol plugin (plugin-api/metrics.ts is what the core counts through; metrics.ts,
 * made by the composition, is the prom-client registry behind it): `GET /metrics`.
 */
export const metricsPlugin: GatehousePlugin = {
  name: 'metrics',
  setup: () => metricsRoute,
};
