/**
 * Edges of the admin API (DESIGN §4.1, issue 2 item 5): authentication, content types, body
 * limit, malformed input, unknown routes, health and OpenAPI — and no request, however
 * malformed, produces a 500.
 */
import { connect, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ADMIN_TOKEN, appBody, makeApp } from '../helpers/app.js';
import { expectProblem, expectValidation } from '../helpers/problem.js';
import { engineOf } from '../../server/db/store.js';

/** Every admin endpoint of issue 2, with a valid body where one is needed. */
const ENDPOINTS: [string, string, unknown?][] = [
  ['GET', '/api/admin/applications'],
  ['POST', '/api/admin/applications', appBody()],
  ['GET', '/api/admin/applications/notes'],
  ['PATCH', '/api/admin/applications/notes', { name: 'x' }],
  ['DELETE', '/api/admin/applications/notes'],
  ['POST', '/api/admin/applications/notes/client-secret'],
  ['GET', '/api/admin/applications/notes/auth-policy'],
  ['PATCH', '/api/admin/applications/notes/auth-policy', { signup_policy: 'open' }],
  ['GET', '/api/admin/sso-groups'],
  ['POST', '/api/admin/sso-groups', { id: 'g1', name: 'G' }],
  ['GET', '/api/admin/sso-groups/g1'],
  ['PATCH', '/api/admin/sso-groups/g1', { name: 'G2' }],
  ['DELETE', '/api/admin/sso-groups/g1'],
  ['POST', '/api/admin/sso-groups/g1/apps', { appId: 'notes' }],
  ['DELETE', '/api/admin/sso-groups/g1/apps/notes'],
  ['GET', '/api/admin/auth/providers'],
];

const json = { 'content-type': 'application/json' };

describe('admin authentication', () => {
  it('answers 401 with WWW-Authenticate: Bearer on every endpoint without valid credentials, and changes nothing', async () => {
    const t = await makeApp();
    const bad: (Record<string, string> | undefined)[] = [
      undefined,
      { authorization: 'Bearer wrong-token-0123456789abc' },
      { authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}` },
      { authorization: ADMIN_TOKEN },
      { authorization: 'Bearer' },
      { authorization: 'Bearer ' },
      { authorization: `Bearer ${ADMIN_TOKEN}x` },
      { authorization: `Bearer ${ADMIN_TOKEN.slice(0, -1)}` },
      { authorization: `Bearer ${ADMIN_TOKEN} extra` },
      { authorization: `Token ${ADMIN_TOKEN}` },
    ];
    for (const [method, url, body] of ENDPOINTS) {
      for (const headers of bad) {
        const res = await t.app.inject({
          method: method as 'GET',
          url,
          headers: { ...(body === undefined ? {} : json), ...headers },
          ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
        });
        const label = `${method} ${url} ${JSON.stringify(headers)}`;
        expect(res.statusCode, label).toBe(401);
        expect(res.headers['www-authenticate'], label).toBe('Bearer');
        expectProblem(res, 401, 'unauthorized');
      }
    }
    const list = await t.admin('GET', '/api/admin/applications');
    expect(list.json().applications).toEqual([]);
  });

  it('accepts the scheme name in any case (RFC 7235)', async () => {
    const t = await makeApp();
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const res = await t.app.inject({ method: 'GET', url: '/api/admin/applications', headers: { authorization: `${scheme} ${ADMIN_TOKEN}` } });
      expect(res.statusCode, scheme).toBe(200);
    }
  });

  it('checks credentials before the body, so an unauthenticated caller learns nothing from validation', async () => {
    const t = await makeApp();
    const res = await t.app.inject({ method: 'POST', url: '/api/admin/applications', headers: json, payload: '{"nope":' });
    expectProblem(res, 401, 'unauthorized');
  });
});

describe('request bodies', () => {
  it('answers 413 payload_too_large above 100 KiB and accepts bodies just under it', async () => {
    const t = await makeApp();
    const big = JSON.stringify(appBody({ name: 'x'.repeat(100 * 1024) }));
    const res = await t.admin('POST', '/api/admin/applications', big, json);
    const body = expectProblem(res, 413, 'payload_too_large');
    expect(body.title).toBe('Payload Too Large');
    // Under the limit the body is parsed and validated (name too long → 400, not 413).
    const under = JSON.stringify(appBody({ name: 'x'.repeat(100 * 1024 - 200) }));
    expect(Buffer.byteLength(under)).toBeLessThan(100 * 1024);
    expectValidation(await t.admin('POST', '/api/admin/applications', under, json), ['body.name']);
  });

  it('answers 415 unsupported_media_type for anything but JSON', async () => {
    const t = await makeApp();
    const cases: [string | undefined, string][] = [
      ['text/plain', JSON.stringify(appBody())],
      ['text/plain;charset=UTF-8', JSON.stringify(appBody())],
      ['application/x-www-form-urlencoded', 'id=notes&name=Notes'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="id"\r\n\r\nnotes\r\n--x--'],
      ['application/xml', '<app/>'],
      ['application/jsonx', JSON.stringify(appBody())],
      [undefined, JSON.stringify(appBody())],
    ];
    for (const [type, payload] of cases) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/admin/applications',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(type ? { 'content-type': type } : {}) },
        payload: Buffer.from(payload),
      });
      expect(res.statusCode, String(type)).toBe(415);
      expectProblem(res, 415, 'unsupported_media_type');
    }
    for (const [method, url] of [['PATCH', '/api/admin/applications/notes/auth-policy'], ['POST', '/api/admin/sso-groups']] as const) {
      const res = await t.admin(method, url, 'name=x', { 'content-type': 'application/x-www-form-urlencoded' });
      expectProblem(res, 415, 'unsupported_media_type');
    }
    // JSON with a charset parameter is JSON.
    const ok = await t.admin('POST', '/api/admin/applications', JSON.stringify(appBody()), { 'content-type': 'application/json; charset=utf-8' });
    expect(ok.statusCode).toBe(201);
  });

  it('answers 400 invalid_json for malformed JSON, an empty JSON body and prototype keys', async () => {
    const t = await makeApp();
    for (const payload of ['{', '{"id": }', "{'id': 'x'}", '{"a":1}}', 'undefined', '\u0000', '{"__proto__": {"admin": true}}', '{"constructor": {"prototype": {"x": 1}}}', '']) {
      const res = await t.admin('POST', '/api/admin/applications', payload, json);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      const body = expectProblem(res, 400, 'invalid_json');
      expect(body.detail).not.toMatch(/at position|Unexpected token|\n/);
    }
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it('answers 400 validation_failed for JSON that is not an object', async () => {
    const t = await makeApp();
    for (const payload of ['null', '[]', '"notes"', '42', 'true', '[{"id":"notes"}]']) {
      const res = await t.admin('POST', '/api/admin/applications', payload, json);
      expectValidation(res, ['body']);
    }
  });

  it('names unknown fields in bodies and queries on every endpoint that takes them', async () => {
    const t = await makeApp();
    await t.admin('POST', '/api/admin/applications', appBody());
    await t.admin('POST', '/api/admin/sso-groups', { id: 'g1', name: 'G' });
    for (const [method, url, body] of ENDPOINTS) {
      if (body === undefined) continue;
      const res = await t.admin(method as 'POST', url, { ...(body as object), bogus: 1 });
      expect(res.statusCode, `${method} ${url}`).toBe(400);
      expect(expectProblem(res, 400, 'validation_failed').errors).toContainEqual({ path: 'body.bogus', message: 'is not a known field' });
    }
    for (const [method, url, body] of ENDPOINTS) {
      const res = await t.admin(method as 'GET', `${url}?bogus=1`, body);
      expect(res.statusCode, `${method} ${url}?bogus=1`).toBe(400);
      expect(expectProblem(res, 400, 'validation_failed').errors).toContainEqual({ path: 'querystring.bogus', message: 'is not a known field' });
    }
  });
});

describe('routes, health and OpenAPI', () => {
  it('answers unknown routes and methods with a 404 problem', async () => {
    const t = await makeApp();
    for (const [method, url] of [
      ['GET', '/nope'],
      ['GET', '/api/admin/nope'],
      ['GET', '/api/admin/applications/notes/nope'],
      ['PUT', '/api/admin/applications/notes'],
      ['POST', '/api/admin/auth/providers'],
      ['OPTIONS', '/api/admin/applications'],
    ] as const) {
      const res = await t.admin(method, url);
      const body = expectProblem(res, 404, 'route_not_found');
      expect(body.detail).toBe(`No route for ${method} ${url}.`);
    }
  });

  it('checks credentials before admitting that an admin route does not exist', async () => {
    const t = await makeApp();
    for (const url of ['/api/admin/nope', '/api/admin/applications/notes/nope']) {
      const res = await t.app.inject({ method: 'GET', url });
      expectProblem(res, 401, 'unauthorized');
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
    expectProblem(await t.app.inject({ method: 'GET', url: '/nope' }), 404, 'route_not_found');
  });

  it('checks credentials first for an absolute-form request target too', async () => {
    const t = await makeApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const { port } = t.app.server.address() as AddressInfo;
      const raw = (target: string) =>
        new Promise<string>((resolve, reject) => {
          let answer = '';
          const socket = connect({ host: '127.0.0.1', port }, () => socket.end(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`));
          socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk)).on('end', () => resolve(answer)).on('error', reject);
        });
      for (const target of ['http://x/api/admin/nope', 'http://x/api/admin/applications', 'HTTP://x:1/api/admin/applications/notes/nope?a=1']) {
        const answer = await raw(target);
        expect(answer.split('\r\n')[0], target).toBe('HTTP/1.1 401 Unauthorized');
        expect(answer).toContain('"code":"unauthorized"');
      }
      expect((await raw('http://x/nope')).split('\r\n')[0]).toBe('HTTP/1.1 404 Not Found');
    } finally {
      await t.app.close();
    }
  });

  it('answers a malformed URL with a 400 problem', async () => {
    const t = await makeApp();
    for (const url of ['/api/admin/applications/%E0%A4%A', '/api/admin/sso-groups/%', '/api/admin/applications/%ZZ/auth-policy']) {
      expectProblem(await t.admin('GET', url), 400, 'bad_request');
    }
  });

  it('treats path parameters as data, not patterns', async () => {
    const t = await makeApp();
    // An empty id is an id like any other.
    expect(expectProblem(await t.admin('GET', '/api/admin/applications/'), 404, 'application_not_found').detail).toBe('There is no application with id "".');
    for (const id of ['...', '%2e%2e', 'notes%2Fauth-policy', "'; DROP TABLE applications; --", '%00', 'x'.repeat(200)]) {
      const res = await t.admin('GET', `/api/admin/applications/${encodeURIComponent(id)}`);
      expect(expectProblem(res, 404, 'application_not_found').detail, id).toBe(`There is no application with id "${id}".`);
    }
    // Longer than the router allows for a path segment.
    const long = expectProblem(await t.admin('GET', `/api/admin/applications/${'x'.repeat(300)}`), 414, 'uri_too_long');
    expect(long.title).toBe('URI Too Long');
  });

  it('serves GET /healthz without credentials, with the security headers', async () => {
    const t = await makeApp();
    const res = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', database: 'reachable' });
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  });

  it('/healthz and /readyz report the database: 503 unreachable once it cannot answer; /readyz not_ready then', async () => {
    const t = await makeApp();
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect([ready.statusCode, ready.json()]).toEqual([200, { status: 'ready' }]);
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok', database: 'reachable' });
    // The store's connection gone (SQLite file closed; PostgreSQL pool ended).
    if (engineOf(t.db) === 'postgres') await (t.db.$client as unknown as { end(): Promise<void> }).end();
    else t.db.$client.close();
    const health = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect([health.statusCode, health.json()]).toEqual([503, { status: 'unavailable', database: 'unreachable' }]);
    const notReady = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect([notReady.statusCode, notReady.json(), notReady.headers['cache-control']]).toEqual([503, { status: 'not_ready', reason: 'database_unreachable' }, 'no-store']);
  });


  it('serves an OpenAPI 3 document generated from the route schemas', async () => {
    const t = await makeApp();
    const res = await t.app.inject({ method: 'GET', url: '/api/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const doc = res.json();
    expect(doc.openapi).toMatch(/^3\.\d+\.\d+$/);
    expect(doc.info).toMatchObject({ title: 'Gatehouse', version: expect.any(String) });
    expect(doc.components.securitySchemes.adminToken).toEqual({ type: 'http', scheme: 'bearer', description: expect.any(String) });
    expect(doc.components.schemas.Problem).toMatchObject({ type: 'object', required: ['type', 'title', 'status', 'detail', 'code'] });

    const expected: Record<string, string[]> = {
      '/api/admin/applications': ['get', 'post'],
      '/api/admin/applications/{id}': ['get', 'patch', 'delete'],
      '/api/admin/applications/{id}/client-secret': ['post'],
      '/api/admin/applications/{id}/auth-policy': ['get', 'patch'],
      '/api/admin/sso-groups': ['get', 'post'],
      '/api/admin/sso-groups/{id}': ['get', 'patch', 'delete'],
      '/api/admin/sso-groups/{id}/apps': ['post'],
      '/api/admin/sso-groups/{id}/apps/{appId}': ['delete'],
      '/api/admin/auth/providers': ['get'],
    };
    for (const [path, methods] of Object.entries(expected)) {
      expect(doc.paths[path], path).toBeDefined();
      for (const method of methods) {
        const op = doc.paths[path][method];
        expect(op, `${method} ${path}`).toBeDefined();
        expect(op.security).toEqual([{ adminToken: [] }]);
        expect(Object.keys(op.responses)).toContain('401');
        for (const param of op.parameters ?? []) {
          expect(['path', 'query']).toContain(param.in);
          expect(typeof param.name).toBe('string');
          expect(param.schema).toBeDefined();
          if (param.in === 'path') expect(param.required).toBe(true);
        }
      }
    }
    // Schemas reach the document: the create body and the record, without any secret hash.
    const post = doc.paths['/api/admin/applications'].post;
    // Two shapes: an application's own settings, or an app preset and its inputs (told apart by `preset`).
    const [plain, fromPreset] = post.requestBody.content['application/json'].schema.anyOf;
    expect(post.requestBody.content['application/json'].schema['x-shape-by']).toBe('preset');
    expect(plain.required).toEqual(['id', 'name', 'audience', 'redirectUris']);
    expect(plain.additionalProperties).toBe(false);
    expect(fromPreset.required).toEqual(['preset', 'presetInputs']);
    expect(fromPreset.additionalProperties).toBe(false);
    expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(['201', '400', '401', '409', '413', '415']));
    const record = doc.paths['/api/admin/applications/{id}'].get.responses['200'].content['application/json'].schema;
    expect(Object.keys(record.properties)).toEqual([
      'id', 'name', 'audience', 'redirectUris', 'postLogoutRedirectUris', 'clientType', 'webhookUrl', 'webhookSecretSet', 'ssoGroupId', 'authPolicy',
      'allowedGroups', 'grantTypes', 'backchannelLogoutUri', 'backchannelLogoutSessionRequired', 'branding', 'consent', 'forwardAuth', 'radius', 'saml',
      'unknownScopes', 'groupsFilter', 'customClaims', 'resourceServers', 'signingAlg', 'ldap', 'preset', 'createdAt', 'updatedAt',
    ]);
    expect(JSON.stringify(doc)).not.toMatch(/secretHash|keyHash|tokenHash/);

    // Every local $ref resolves.
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of new Set(refs)) {
      expect(ref, ref).toMatch(/^#\/components\/schemas\//);
      expect(doc.components.schemas[ref.split('/').pop()!], ref).toBeDefined();
    }
    // Health and the document itself are not part of the API description.
    expect(doc.paths['/healthz']).toBeUndefined();
    expect(doc.paths['/api/openapi.json']).toBeUndefined();
  });
});

describe('robustness', () => {
  it('never answers 500, and answers /api errors as problem+json, for a batch of malformed requests', async () => {
    const t = await makeApp();
    await t.admin('POST', '/api/admin/applications', appBody());
    await t.admin('POST', '/api/admin/sso-groups', { id: 'g1', name: 'G' });

    const paths = [
      ...ENDPOINTS.map(([, url]) => url),
      '/api/admin/applications/notes/auth-policy/x',
      '/api/admin/applications?limit=1&limit=2',
      '/api/admin/applications?cursor[]=1',
      '/api/admin/applications?limit[$gt]=1',
      '/api/admin/applications?__proto__[x]=1',
      '/api/admin/applications?cursor=' + '%FF'.repeat(10),
      '/api/admin//applications',
      '/api/admin/applications/%',
      '/api/admin/sso-groups/g1/apps/%C0%AF',
      '/api/admin/applications/notes%00',
      '/healthz?x=' + 'a'.repeat(5000),
    ];
    const bodies = [
      undefined,
      '',
      '{}',
      '[]',
      'null',
      '{"id": null, "name": null, "audience": null, "redirectUris": null}',
      '{"redirectUris": [null, 1, {}, []]}',
      '{"authPolicy": {"profile_fields": [{"key": "a", "label": "b", "type": "select", "options": [null]}]}}',
      '{"authPolicy": null}',
      '{"profile_fields": "x", "allowed_providers": [1]}',
      '{"name": "\\ud800"}',
      JSON.stringify({ id: 'x'.repeat(10_000) }),
      '[' .repeat(5000) + ']'.repeat(5000),
      '{"a":'.repeat(2000) + '1' + '}'.repeat(2000),
      '\uFEFF{}',
      '{"appId": {"$ne": null}}',
    ];
    const types = ['application/json', 'application/json; charset=utf-16', 'application/json; charset=latin1', 'text/plain', 'application/problem+json', '*/*', ';;;', 'application/json, text/plain'];
    const methods = ['GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'HEAD', 'OPTIONS'] as const;
    const auths = [`Bearer ${ADMIN_TOKEN}`, undefined, 'Bearer \u00ff', 'Bearer a b c', `Bearer ${'x'.repeat(10_000)}`];

    let checked = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...methods),
        fc.constantFrom(...paths),
        fc.constantFrom(...bodies),
        fc.constantFrom(...types),
        fc.constantFrom(...auths),
        async (method, url, body, type, auth) => {
          const res = await t.app.inject({
            method,
            url,
            headers: { ...(auth ? { authorization: auth } : {}), ...(body === undefined ? {} : { 'content-type': type }) },
            ...(body === undefined ? {} : { payload: body }),
          });
          checked++;
          const label = `${method} ${url} ${type} ${JSON.stringify(body)?.slice(0, 80)} → ${res.statusCode} ${res.body.slice(0, 200)}`;
          expect(res.statusCode, label).toBeLessThan(500);
          if (res.statusCode >= 400 && method !== 'HEAD') {
            expect(res.headers['content-type'], label).toBe('application/problem+json; charset=utf-8');
            expect(res.json().status, label).toBe(res.statusCode);
          }
        },
      ),
      { numRuns: 400, seed: 20260301 },
    );
    expect(checked).toBe(400);

    // Random bytes as bodies and random strings as paths.
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 2000 }), fc.string({ maxLength: 60 }), async (bytes, tail) => {
        const res = await t.app.inject({
          method: 'POST',
          url: `/api/admin/applications/${encodeURIComponent(tail)}`,
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
          payload: Buffer.from(bytes),
        });
        expect(res.statusCode).toBeLessThan(500);
        expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      }),
      { numRuns: 150, seed: 7 },
    );

    // The store is intact afterwards.
    const list = await t.admin('GET', '/api/admin/applications');
    expect(list.statusCode).toBe(200);
  });
});
