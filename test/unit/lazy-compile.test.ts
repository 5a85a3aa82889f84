/**
 * Compiled route schemas an idle server forgets (server/http/lazy-compile.ts, issue 45, decision
 * 0364): `dropUnusedCompiled()` keeps what was called since its previous call and forgets the
 * rest — the validator with Ajv's cache entry, the serializer — and a route whose code was
 * forgotten compiles again on its next request and answers exactly as before. One app for the file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledCount, dropCompiledUnusedFor, dropUnusedCompiled, lazySerializerFactory, lazyValidator, lazyValidators, shareCompiledSchemas, type ValidatorKind } from '../../server/http/lazy-compile.js';
import { validators } from '../../server/http/validators.js';
import { appBody, makeApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await makeApp({ perFile: true });
  // This file's routes compile their own schemas, not ones earlier files' apps in this process
  // compiled (a worker's files share their modules, vitest.config.ts): what is forgotten is then
  // what this file compiled. The next makeApp shares again.
  shareCompiledSchemas(false);
});
afterAll(async () => {
  await t.app.close();
});

/** Ajv's cache of compiled schemas (private; the entries release must remove). */
const ajvCached = () => (validators().body as unknown as { _cache: Map<object, unknown> })._cache.size;

const refusal = () => t.admin('POST', '/api/admin/applications', { ...appBody({ id: 'x' }), clientType: 'nonsense' });

describe('compiled route schemas forgotten when unused', () => {
  it('forgets a validator and a serializer unused over two passes, and the route answers the same after compiling again', async () => {
    // From none: what earlier files' apps compiled in this process is forgotten first.
    dropUnusedCompiled();
    dropUnusedCompiled();
    expect(compiledCount()).toBe(0);
    const refused = await refusal();
    expect(refused.statusCode).toBe(400);
    const created = await t.admin('POST', '/api/admin/applications', appBody({ id: 'first' }));
    expect(created.statusCode).toBe(201);
    const held = compiledCount();
    const cached = ajvCached();
    expect(held).toBeGreaterThanOrEqual(2); // the body's validator, the 201's and 400's serializers

    // Called since they were compiled: the first pass keeps them, the second forgets them.
    expect(dropUnusedCompiled()).toBe(0);
    expect(compiledCount()).toBe(held);
    expect(dropUnusedCompiled()).toBe(held);
    expect(compiledCount()).toBe(0);
    expect(ajvCached()).toBeLessThan(cached);

    const again = await refusal();
    expect([again.statusCode, again.headers['content-type'], again.json()]).toEqual([refused.statusCode, refused.headers['content-type'], refused.json()]);
    const second = await t.admin('POST', '/api/admin/applications', appBody({ id: 'second', name: 'Second', audience: 'https://second.example.com/api' }));
    expect(second.statusCode).toBe(201);
    expect(Object.keys(second.json()).sort()).toEqual(Object.keys(created.json()).sort());
    expect(compiledCount()).toBe(held);
    expect(ajvCached()).toBe(cached);
  });

  it('keeps what is called between passes', async () => {
    dropUnusedCompiled();
    dropUnusedCompiled();
    expect(compiledCount()).toBe(0);
    expect((await refusal()).statusCode).toBe(400);
    const held = compiledCount();
    expect(held).toBeGreaterThan(0);
    for (let pass = 0; pass < 3; pass++) {
      expect(dropUnusedCompiled()).toBe(0);
      expect((await refusal()).statusCode).toBe(400);
    }
    expect(compiledCount()).toBe(held);
  });

  it('as the idle reclaim calls it, forgets only what went unused for the whole spacing', async () => {
    let now = 0;
    const drop = dropCompiledUnusedFor(600_000, () => now);
    dropUnusedCompiled();
    dropUnusedCompiled();
    expect((await refusal()).statusCode).toBe(400);
    const held = compiledCount();
    expect(held).toBeGreaterThan(0);
    // Reclaims every few quiet seconds within the ten minutes: nothing forgotten, though unused.
    for (now = 5_000; now < 600_000; now += 60_000) expect(drop()).toBe(0);
    expect(compiledCount()).toBe(held);
    now = 600_000;
    expect(drop()).toBe(0); // the first pass: called since compiled, kept
    now = 900_000;
    expect(drop()).toBe(0); // too soon after the last pass
    now = 1_200_000;
    expect(drop()).toBe(held); // ten minutes unused
    expect(compiledCount()).toBe(0);
  });

  it('a validator compiles through its kind on its first call only, and after being forgotten releases and compiles again', () => {
    dropUnusedCompiled();
    dropUnusedCompiled();
    const calls: string[] = [];
    const kind: ValidatorKind = {
      compile: (schema) => {
        calls.push(`compile ${JSON.stringify(schema)}`);
        const validate: ReturnType<ValidatorKind['compile']> = (data: unknown) => {
          validate.errors = typeof data === 'number' ? null : [{ message: 'must be a number' } as never];
          return typeof data === 'number';
        };
        return validate;
      },
      key: (schema) => `test ${JSON.stringify(schema)}`,
      release: (schema) => calls.push(`release ${JSON.stringify(schema)}`),
    };
    const validate = lazyValidator(kind, { type: 'number' });
    expect(calls).toEqual([]);
    expect(compiledCount()).toBe(0);
    expect(validate(1)).toBe(true);
    expect(validate('x')).toBe(false);
    expect(validate.errors).toEqual([{ message: 'must be a number' }]);
    expect(calls).toEqual(['compile {"type":"number"}']);
    expect(compiledCount()).toBe(1);
    expect(dropUnusedCompiled()).toBe(0);
    expect(dropUnusedCompiled()).toBe(1);
    expect(calls).toEqual(['compile {"type":"number"}', 'release {"type":"number"}']);
    // Compiled again, as a server does (this file does not share compiled schemas, beforeAll); the
    // entry is back among the held ones.
    expect(validate(2)).toBe(true);
    expect(validate('y')).toBe(false);
    expect(calls).toEqual(['compile {"type":"number"}', 'release {"type":"number"}', 'compile {"type":"number"}']);
    expect(compiledCount()).toBe(1);
  });

  it('routes that share a schema object share one validator and one serializer, compiled once', () => {
    dropUnusedCompiled();
    dropUnusedCompiled();
    const compiles: string[] = [];
    const kind: ValidatorKind = {
      compile: (schema) => {
        compiles.push(JSON.stringify(schema));
        return Object.assign((data: unknown) => typeof data === 'string', { errors: null });
      },
      key: (schema) => `shared-test ${JSON.stringify(schema)} ${compiles.length}`,
      release: () => {},
    };
    const forKind = lazyValidators(kind);
    const params = { type: 'string', maxLength: 200 };
    const first = forKind(params);
    expect(forKind(params)).toBe(first);
    const equalButOther = forKind({ type: 'string', maxLength: 200 });
    expect(equalButOther).not.toBe(first);
    expect([first('a'), forKind(params)(1), equalButOther('b')]).toEqual([true, false, true]);
    expect(compiles).toEqual(['{"type":"string","maxLength":200}', '{"type":"string","maxLength":200}']);
    expect(compiledCount()).toBe(2);

    // The serializer compiler is asked per route and status; it reads only the schema.
    const problem = { type: 'object', properties: { status: { type: 'integer' }, code: { type: 'string' } } };
    const compiler = lazySerializerFactory()({}, {});
    const notFound = compiler({ schema: problem, url: '/api/admin/groups/:id', method: 'GET', httpStatus: '404' });
    const conflict = compiler({ schema: problem, url: '/api/admin/applications', method: 'POST', httpStatus: '409' });
    expect(conflict).toBe(notFound);
    expect(conflict({ status: 409, code: 'conflict', extra: 'dropped' })).toBe('{"status":409,"code":"conflict"}');
    expect(notFound({ status: 404, code: 'not_found' })).toBe('{"status":404,"code":"not_found"}');
    expect(compiledCount()).toBe(3);
    const own = compiler({ schema: { type: 'object', properties: { id: { type: 'string' } } }, url: '/x', method: 'GET', httpStatus: '200' });
    expect(own).not.toBe(notFound);
  });
});
