/**
 * `buildApp(deps)`: the whole HTTP surface as a Fastify instance that never listens. Tests call
 * this and `inject`; `main.ts` calls it and listens.
 *
 * Scopes: `/api/admin` (admin token or API key, problem+json), `/api/me` (session cookie),
 * `/api/auth` (OAuth/OIDC with RFC 6749 errors, sign-in endpoints), hosted pages, `/admin/`.
 */
import type { Server as TlsServer } from 'node:tls';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions, type RouteOptions } from 'fastify';
import cookie from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Db } from './db/client.js';
import type { Config } from './config.js';
import type { AppContext, GatehousePlugin } from './context.js';
import { systemClock, type Clock } from './util/clock.js';
import { namePluginsOnRegister } from './http/plugin-names.js';
import { fixedAdminToken, type AdminTokenStore } from './http/admin-token.js';
import { notFound, problemErrorHandler, sendProblem } from './http/problem.js';
import { requireAdmin } from './http/admin-auth.js';
import { ProblemSchema, TEXT_FORMATS } from './http/schemas.js';
import { validators } from './http/validators.js';
import { HSTS_HEADERS, securityHeaders } from './http/security-headers.js';
import { lazySerializerFactory, lazyValidators, type ValidatorKind } from './http/lazy-compile.js';
import { compileBody, releaseBody } from './http/body-shapes.js';
import { registerOpenApi } from './http/openapi.js';
import { serverLimits } from './http/server-limits.js';
import { EarlyAnswers, nodeServerFactory } from './http/early-answers.js';
import { registerHealthRoutes } from './http/health.js';
import { applicationRoutes } from './applications/routes.js';
import { ssoGroupRoutes } from './applications/sso-group-routes.js';
import { providerRoutes } from './applications/provider-routes.js';
import { featurePlugins, protocolPlugins } from './features.js';
import { Metrics } from './metrics/metrics.js';
import { Hooks } from './plugin-api/hooks.js';
import { Registries } from './plugin-api/registries.js';
import { adminPluginRoutes } from './http/admin-feature.js';
import { clientAddressOf, withClientAddress } from './http/client-address.js';
import { isBrowserNavigation, isPageRequest, pageErrorHandler } from './pages/page-scope.js';
import { pageText } from './i18n/index.js';
import { errorTitle } from './pages/text.js';
import { renderError } from './pages/render.js';
import { useKeySecret } from './db/secrets-at-rest.js';
import { loadSharedKey } from './accounts/second-factor/secret-box.js';
import { NO_LAN_TRUST } from './http/lan-trust-wire.js';

export interface AppDeps {
  db: Db;
  config: Config;
  clock?: Clock;
  adminToken?: AdminTokenStore;
  logger?: FastifyServerOptions['logger'];
  /** Start background workers (webhook delivery, clean-up). Off by default for inject tests. */
  startWorkers?: boolean;
  /** Serve HTTPS with this key pair (LAN mode, server/ops/tls.ts). */
  https?: { key: string; cert: string };
  /** Told about every route as it is registered (the fuzz tests enumerate the whole surface). */
  onRoute?: (route: RouteOptions) => void;
  /** Plugins set up after the built-in ones (server/features.ts): tests prove the plugin API with their own. */
  plugins?: GatehousePlugin[];
}

/** JSON bodies are limited to this many bytes (413 `payload_too_large` beyond). */
export const BODY_LIMIT = 100 * 1024;

const lazySerializer = lazySerializerFactory();

/** Bodies (strict, shaped bodies: http/body-shapes.ts) and the other parts (query, params: coerced); http/validators.ts. */
const BODY_VALIDATORS: ValidatorKind = {
  compile: (schema) => compileBody(validators().body, schema),
  key: (schema) => `body ${JSON.stringify(schema)}`,
  release: (schema) => releaseBody(validators().body, schema),
};
const QUERY_VALIDATORS: ValidatorKind = {
  compile: (schema) => validators().query.compile(schema),
  key: (schema) => `query ${JSON.stringify(schema)}`,
  release: (schema) => releaseBody(validators().query, schema),
};

// One lazy validator per schema object of each kind (routes share many: NoQuery, IdParams, …).
const bodyValidator = lazyValidators(BODY_VALIDATORS);
const queryValidator = lazyValidators(QUERY_VALIDATORS);

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  // PostgreSQL mode: secrets in the database are sealed under GATEHOUSE_KEY_SECRET (refused
  // without it), and the shared second-factor key is opened before anything serves (issue 26).
  useKeySecret(deps.db, deps.config.env);
  await loadSharedKey(deps.db, (deps.clock ?? systemClock).now());
  // Slow clients and oversized headers are cut off at the connection (server/http/server-limits.ts).
  const limits = serverLimits(deps.config);
  const security = securityHeaders(Boolean(deps.https));
  const metrics = new Metrics((gauge, error) => app.log.warn({ err: error }, `metrics: reading ${gauge} failed`));
  const early = new EarlyAnswers(
    deps.https ? HSTS_HEADERS : {},
    (route, status, seconds) => metrics.requestDone(route, status, seconds),
    clientAddressOf(deps.config.trustProxy),
  );
  const app = Fastify({
    ...limits.fastify,
    logger: deps.logger ?? false,
    // Per-request log lines cost throughput on the token endpoint; errors are still logged.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT,
    // Behind a reverse proxy, GATEHOUSE_TRUST_PROXY names it: request.ip (rate limits, audit, sessions)
    // is then the client X-Forwarded-For names, not the proxy (docs/postgresql.md).
    trustProxy: deps.config.trustProxy.length ? deps.config.trustProxy : false,
    // Never echo a caller-supplied request id into logs.
    requestIdHeader: false,
    ajv: { customOptions: { removeAdditional: false } },
    // Response serializers compile on a route's first answer, not at start-up (http/lazy-compile.ts).
    schemaController: { compilersFactory: { buildSerializer: lazySerializer } },
    // Response schemas share shapes with request schemas; the serializer's own Ajv (used for
    // unions) need not check the display-text formats, only know them (or it warns). It only
    // picks a union's branch, so its validators carry no error messages (issue 45, decision 0349:
    // ~7 % less generated code, 0.1 MB of heap after the panel's calls). Since decision 0365 the
    // serializer sees no union it needs it for (http/union-free.ts), so none is made today.
    serializerOpts: { ajv: { formats: Object.fromEntries(Object.keys(TEXT_FORMATS).map((name) => [name, true])), messages: false } },
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    // The server is ours (http/early-answers.ts); `https: true` only tells Fastify's listen log.
    serverFactory: nodeServerFactory(limits, deps.https, early),
    ...(deps.https ? ({ https: true } as object) : {}),
    // Malformed URLs (bad percent-encoding) get the documented shape, not Fastify's default: the
    // error page where a browser navigates, problem details elsewhere. These answers skip the
    // onSend hooks, so the security headers are set here (a page's own CSP then replaces the strict one).
    frameworkErrors: (error, request, reply) => {
      security.apply(reply);
      return (isPageRequest(request) ? pageErrorHandler : problemErrorHandler)(error, request, reply);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
  namePluginsOnRegister(app);

  const ctx: AppContext = {
    db: deps.db,
    config: deps.config,
    clock: deps.clock ?? systemClock,
    adminToken: deps.adminToken ?? fixedAdminToken(deps.config.adminToken ?? ''),
    wakeWebhooks: () => {},
    wakePurger: () => {},
    readAccessToken: async () => undefined,
    metrics,
    hooks: new Hooks(),
    registries: new Registries(),
    lanTrust: NO_LAN_TRUST,
    serveCertificate: (material) => {
      if (deps.https) (app.server as unknown as Partial<TlsServer>).setSecureContext?.({ key: material.key, cert: material.cert });
    },
    listenAddresses: () => {
      const address = app.server.address();
      return address && typeof address === 'object' ? [address] : [];
    },
  };
  if (deps.onRoute) app.addHook('onRoute', deps.onRoute);
  app.decorate('ctx', ctx);
  // The protocol plugins listen and fill the registries before any route exists (plugin-api/).
  const pluginRoutes = [...protocolPlugins, ...(deps.plugins ?? [])].map((plugin) => plugin.setup(ctx));
  ctx.registries.close();
  app.decorate('earlyAnswers', early);
  app.decorateRequest('actor', undefined as never);

  // Compiled on a route's first request, not at start-up (http/lazy-compile.ts); the Ajv
  // instances themselves are made then too.
  // Forgotten again by an idle server when unused (dropUnusedCompiled), with Ajv's cache entries.
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodyValidator : queryValidator)(schema as object));
  app.setErrorHandler(problemErrorHandler);
  // JSON only: a text/plain body is a 415, not a string that fails validation (and browsers may
  // send text/plain cross-site without a preflight).
  app.removeContentTypeParser('text/plain');
  app.setNotFoundHandler(async (request, reply) => {
    // Under /api/admin, credentials are checked first, so strangers cannot map which routes exist.
    // The path as routed: an absolute-form target (`GET http://host/api/admin/x`) names it too.
    const path = request.url.replace(/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*/, '');
    if (path === '/api/admin' || path.startsWith('/api/admin/') || path.startsWith('/api/admin?')) await requireAdmin(request);
    if (isPageRequest(request) || isBrowserNavigation(request)) {
      const { t } = pageText(ctx.config, request);
      return renderError(reply, 404, errorTitle(t, 404), t('errors.notFound'), { link: { href: '/account', label: t('common.goToAccount') } });
    }
    return sendProblem(reply, notFound('route_not_found', `No route for ${request.method} ${request.url.split('?')[0]}.`));
  });
  app.addHook('onSend', security.onSend);
  // The request-duration histogram (answers before Fastify count in EarlyAnswers); a callback
  // hook, no promise: it runs on every request Fastify answers.
  app.addHook('onResponse', (request, reply, done) => {
    metrics.requestDone(request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  app.addHook('onClose', (_app, done) => {
    metrics.stop();
    done();
  });
  // What the audit log records as the request's address (http/client-address.ts): from here to
  // the end of the handler. After the body is parsed, whose stream events run outside the scope.
  app.addHook('preHandler', (request, _reply, done) => withClientAddress(request.ip, done));
  app.addSchema(ProblemSchema);

  await app.register(cookie);
  // Before any route, so the API description sees them all (built on first request: http/openapi.ts).
  registerOpenApi(app, [ProblemSchema]);

  registerHealthRoutes(app);

  await app.register(
    async (admin) => {
      admin.addHook('onRequest', requireAdmin);
      await admin.register(applicationRoutes);
      await admin.register(ssoGroupRoutes);
      await admin.register(providerRoutes);
    },
    { prefix: '/api/admin' },
  );

  const options = { startWorkers: deps.startWorkers ?? false };
  for (const plugin of featurePlugins) await app.register(plugin, options);
  for (const routes of pluginRoutes) if (routes) await app.register(routes, options);
  // The admin routes plugins registered, behind the admin guard with their rules (registries.adminRoutes).
  await app.register(adminPluginRoutes(ctx.registries.adminRoutes.all));

  return app;
}
