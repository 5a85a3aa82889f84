/**
 * Response schemas without unions for the serializer (server/http/union-free.ts, issue 45,
 * decision 0365): each union that can be one schema is rewritten to a type list, and
 * fast-json-stringify writes the same bytes from the rewritten schema as from the union for every
 * value a branch accepts, without building an Ajv validator. The routes keep their schemas: the
 * served OpenAPI document still says `anyOf`. One app for the file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import build from 'fast-json-stringify';
import { Type } from 'typebox';
import { unionFree } from '../../server/http/union-free.js';
import { appBody, makeApp, type TestApp } from '../helpers/app.js';

/** fast-json-stringify as the server builds it (debug mode: the validator it builds, if any). */
const serializer = (schema: object) => build(schema, { ajv: { messages: false } });
/** Whether the serializer validates values to serialise them (a union's branch choice). */
const validates = (schema: object) => (build(schema, { mode: 'debug' }) as unknown as { code: string }).code.includes('validate_0');

const nullableObject = Type.Union(
  [Type.Object({ hosts: Type.Array(Type.String()), basic: Type.Boolean() }, { additionalProperties: false }), Type.Null()],
  { description: 'forward auth' },
);
const record = Type.Object({
  name: Type.Union([Type.String(), Type.Null()]),
  at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'when' }),
  code: Type.Union([Type.Integer(), Type.Null()]),
  status: Type.Union(['next', 'active', 'retired'].map((s) => Type.Literal(s))),
  source: Type.Union([Type.Literal('id'), Type.Literal('email'), Type.Null()]),
  profile: Type.Record(Type.String(), Type.Union([Type.Union([Type.String(), Type.Number(), Type.Boolean()]), Type.Null()])),
  forwardAuth: nullableObject,
  list: Type.Union([Type.Array(Type.Object({ n: Type.Integer() })), Type.Null()]),
});

describe('unions written as one schema', () => {
  it('rewrites nullable fields, literals and primitive unions to type lists, keeping each branch’s detail', () => {
    const free = unionFree(record) as { properties: Record<string, unknown> };
    expect(free.properties).toEqual({
      name: { type: ['string', 'null'] },
      at: { description: 'when', format: 'date-time', type: ['string', 'null'] },
      code: { type: ['integer', 'null'] },
      status: { type: 'string' },
      source: { type: ['string', 'null'] },
      profile: { type: 'object', patternProperties: { '^.*$': { type: ['string', 'number', 'boolean', 'null'] } } },
      forwardAuth: {
        description: 'forward auth', type: ['object', 'null'], additionalProperties: false, required: ['hosts', 'basic'],
        properties: { hosts: { type: 'array', items: { type: 'string' } }, basic: { type: 'boolean' } },
      },
      list: { type: ['array', 'null'], items: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } } },
    });
    expect(JSON.stringify(free)).not.toContain('anyOf');
    // The input is not changed (the route keeps it for the OpenAPI document).
    expect(JSON.stringify(record)).toContain('anyOf');
  });

  it('keeps a union it cannot write as one schema', () => {
    const twoObjects = Type.Union([Type.Object({ user: Type.String() }), Type.Object({ user: Type.Integer(), challenge: Type.String() })]);
    const stringOrObject = Type.Union([Type.String(), Type.Object({ a: Type.String() })]);
    const twoStrings = Type.Union([Type.String({ format: 'date-time' }), Type.String({ pattern: '^x' })]);
    const siblings = { anyOf: [{ type: 'string' }, { type: 'null' }], minLength: 2 };
    const optionalOnly = Type.Union([Type.Object({ user: Type.Optional(Type.String()) }), Type.Object({ challenge: Type.String() })]);
    for (const schema of [twoObjects, stringOrObject, twoStrings, siblings, optionalOnly]) expect(unionFree(schema)).toEqual(JSON.parse(JSON.stringify(schema)));
  });

  it('writes objects with no property in common as one object, each answer the same bytes', () => {
    const signIn = Type.Union([
      Type.Object({ user: Type.Object({ id: Type.String(), name: Type.Union([Type.String(), Type.Null()]) }) }),
      Type.Object({ secondFactor: Type.Object({ methods: Type.Array(Type.Union([Type.Literal('totp'), Type.Literal('passkey')])) }) }, { additionalProperties: false }),
    ]);
    const free = unionFree(signIn);
    expect(free).toEqual({
      type: 'object',
      properties: {
        user: { type: 'object', required: ['id', 'name'], properties: { id: { type: 'string' }, name: { type: ['string', 'null'] } } },
        secondFactor: { type: 'object', required: ['methods'], properties: { methods: { type: 'array', items: { type: 'string' } } } },
      },
    });
    const before = serializer(signIn);
    const after = serializer(free);
    for (const value of [{ user: { id: 'p1', name: null } }, { user: { id: 'p2', name: 'Ada' } }, { secondFactor: { methods: ['totp', 'passkey'] } }, { secondFactor: { methods: [] } }]) {
      expect(after(value)).toBe(before(value));
      expect(JSON.parse(after(value))).toEqual(value);
    }
    expect(validates(free)).toBe(false);
  });

  it('serialises every value a branch accepts to the same bytes, with no validator', () => {
    const values = [
      {
        name: 'Ada', at: '2026-11-29T16:00:00.000Z', code: 204, status: 'active', source: 'email',
        profile: { a: 'x', b: 2.5, c: true, d: null }, forwardAuth: { hosts: ['a.example'], basic: false }, list: [{ n: 1 }],
      },
      { name: null, at: null, code: null, status: 'next', source: null, profile: {}, forwardAuth: null, list: null },
      { name: 'é "quoted" \\ \u2028', at: null, code: 0, status: 'retired', source: 'id', profile: { n: 0 }, forwardAuth: { hosts: [], basic: true }, list: [] },
    ];
    const before = serializer(record);
    const after = serializer(unionFree(record));
    for (const value of values) {
      expect(after(value)).toBe(before(value));
      expect(JSON.parse(after(value))).toEqual(value);
    }
    expect(validates(record)).toBe(true);
    expect(validates(unionFree(record))).toBe(false);
  });
});

describe('the server’s response schemas', () => {
  let t: TestApp;
  /** Every route's response schemas, by `METHOD path status`, as the routes give them to the serializer. */
  const responses = new Map<string, object>();
  beforeAll(async () => {
    t = await makeApp({
      perFile: true,
      deps: {
        onRoute: (route) => {
          const byStatus = (route.schema as { response?: Record<string, object> } | undefined)?.response ?? {};
          for (const method of ([] as string[]).concat(route.method)) for (const [status, schema] of Object.entries(byStatus)) responses.set(`${method} ${route.url} ${status}`, schema);
        },
      },
    });
  });
  afterAll(async () => {
    await t.app.close();
  });

  it('serialise without unions', async () => {
    const withUnions = [...responses].filter(([, schema]) => JSON.stringify(schema).includes('"anyOf"'));
    expect(withUnions.length).toBeGreaterThan(50);
    const left = withUnions.filter(([, schema]) => JSON.stringify(unionFree(schema)).includes('"anyOf"')).map(([route]) => route);
    expect(left).toEqual([]);
    // The routes keep their unions (the OpenAPI document and the request validators read them).
    expect(JSON.stringify(responses.get('GET /api/admin/applications/:id 200'))).toContain('"anyOf"');
  });

  it('answer an application and the applications list as before', async () => {
    const created = await t.admin('POST', '/api/admin/applications', { ...appBody({ id: 'union-free' }), forwardAuth: { hosts: ['uf.example'] } });
    expect(created.statusCode).toBe(201);
    const one = await t.admin('GET', '/api/admin/applications/union-free');
    expect(one.statusCode).toBe(200);
    const app = one.json() as Record<string, unknown>;
    expect(app.forwardAuth).toEqual({ hosts: ['uf.example'], basic: false });
    expect(app.saml).toBeNull();
    expect(app.radius).toBeNull();
    const list = await t.admin('GET', '/api/admin/applications');
    expect(list.statusCode).toBe(200);
    expect((list.json() as { applications: { id: string }[] }).applications.find((a) => a.id === 'union-free')).toEqual(app);
  });
});
