/**
 * `GET /api/openapi.json`: the OpenAPI 3 document @fastify/swagger generates from the route
 * schemas, built on its first request instead of at start-up (issue 9: ready within 1 s).
 * Every route is recorded as it is registered (an `onRoute` hook, so routes added later by any
 * feature are included); the first request loads @fastify/swagger and its YAML library, replays
 * the recorded routes into a throwaway Fastify instance that only describes them (no
 * validation, no serialisation, never listens) and keeps the document.
 */
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify';
import type { SwaggerOptions } from '@fastify/swagger';

const OPTIONS: SwaggerOptions = {
  // Shared schemas keep their $id (`Problem`) as the component name instead of `def-0`.
  refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  openapi: {
    info: { title: 'Gatehouse', version: '0.1.0', description: 'Identity service: OAuth 2.1 / OIDC, admin and self-service APIs.' },
    components: {
      securitySchemes: {
        adminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN or an application API key' },
      },
    },
  },
};

async function describe(routes: RouteOptions[], sharedSchemas: object[]): Promise<unknown> {
  const { default: swagger } = await import('@fastify/swagger');
  const describer = Fastify({ exposeHeadRoutes: false });
  describer.setValidatorCompiler(() => () => true);
  describer.setSerializerCompiler(() => (data) => JSON.stringify(data));
  for (const schema of sharedSchemas) describer.addSchema(schema);
  await describer.register(swagger, OPTIONS);
  const noop = async () => null;
  // HEAD routes are Fastify's automatic twins of GET routes; swagger leaves them out anyway.
  for (const route of routes) {
    if (route.method === 'HEAD') continue;
    describer.route({ method: route.method, url: route.url, ...(route.schema ? { schema: route.schema } : {}), handler: noop });
  }
  await describer.ready();
  const document = describer.swagger();
  await describer.close();
  return document;
}

/** Records every route from here on and serves their description at `/api/openapi.json`. */
export function registerOpenApi(app: FastifyInstance, sharedSchemas: object[]): void {
  const routes: RouteOptions[] = [];
  app.addHook('onRoute', (route) => {
    routes.push(route);
  });
  let document: Promise<unknown> | undefined;
  app.get('/api/openapi.json', { schema: { hide: true } }, () =>
    (document ??= describe(routes, sharedSchemas).catch((error: unknown) => {
      document = undefined;
      throw error;
    })),
  );
}
