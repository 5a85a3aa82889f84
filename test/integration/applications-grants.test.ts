/**
 * The application fields of spec grants-and-logout.md in the admin API: `grantTypes` (default,
 * `client_credentials` only for `web`), `backchannelLogoutUri` (https, or http on a loopback or
 * LAN host; the webhook target rules) and `backchannelLogoutSessionRequired`, with API keys kept
 * from changing who can obtain tokens.
 */
import { describe, expect, it } from 'vitest';
import { appBody, makeApp } from '../helpers/app.js';
import { expectProblem, expectValidation } from '../helpers/problem.js';
import { backchannelLogouts } from '../../server/db/schema.js';
import { exec } from '../../server/db/store.js';

/** A 400 naming exactly this field with this sentence. */
function expectFieldError(res: Parameters<typeof expectValidation>[0], path: string, message: string) {
  expect(expectValidation(res, [path]).errors).toEqual([{ path, message }]);
}

const CC = 'client_credentials';
const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';

describe('grantTypes', () => {
  it('defaults to the code and refresh grants, and takes any allowed set', async () => {
    const t = await makeApp();
    const res = await t.admin('POST', '/api/admin/applications', appBody());
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ grantTypes: ['authorization_code', 'refresh_token'], backchannelLogoutUri: null, backchannelLogoutSessionRequired: true });
    const patched = await t.admin('PATCH', '/api/admin/applications/notes', { grantTypes: [CC, DEVICE, 'refresh_token'] });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().grantTypes).toEqual([CC, DEVICE, 'refresh_token']);
    expect((await t.admin('GET', '/api/admin/applications/notes')).json().grantTypes).toEqual([CC, DEVICE, 'refresh_token']);
  });

  it('client_credentials only for a confidential (web) application: 400 naming body.grantTypes', async () => {
    const t = await makeApp();
    const spa = await t.admin('POST', '/api/admin/applications', appBody({ clientType: 'spa', grantTypes: [CC] }));
    expectFieldError(spa, 'body.grantTypes', 'client_credentials is allowed only for confidential (web) applications');
    expect((await t.admin('POST', '/api/admin/applications', appBody({ grantTypes: [CC] }))).statusCode).toBe(201);
    // Turning the web client public while it keeps the grant is the same mistake.
    const toSpa = await t.admin('PATCH', '/api/admin/applications/notes', { clientType: 'spa' });
    expectFieldError(toSpa, 'body.grantTypes', 'client_credentials is allowed only for confidential (web) applications');
  });

  it('refuses unknown, duplicate and empty lists', async () => {
    const t = await makeApp();
    expect((await t.admin('POST', '/api/admin/applications', appBody())).statusCode).toBe(201);
    for (const grantTypes of [['password'], ['refresh_token', 'refresh_token'], []]) {
      const res = await t.admin('PATCH', '/api/admin/applications/notes', { grantTypes });
      expectProblem(res, 400, 'validation_failed');
      expect(res.json().errors[0].path).toMatch(/^\/?body\/?\.?grantTypes/);
    }
  });
});

describe('backchannelLogoutUri', () => {
  it('takes https anywhere and http on loopback (when allowed) or LAN hosts; null clears it', async () => {
    const t = await makeApp({ config: { webhookAllowLoopback: true } });
    expect((await t.admin('POST', '/api/admin/applications', appBody({ backchannelLogoutUri: 'https://notes.example.com/bcl?x=1' }))).statusCode).toBe(201);
    for (const uri of ['http://127.0.0.1:3000/logout', 'http://notes.lan/logout', 'http://192.168.1.20/logout']) {
      const res = await t.admin('PATCH', '/api/admin/applications/notes', { backchannelLogoutUri: uri, backchannelLogoutSessionRequired: false });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ backchannelLogoutUri: uri, backchannelLogoutSessionRequired: false });
    }
    const cleared = await t.admin('PATCH', '/api/admin/applications/notes', { backchannelLogoutUri: null });
    expect(cleared.json()).toMatchObject({ backchannelLogoutUri: null, backchannelLogoutSessionRequired: false });
  });

  it('refuses what deliveries may not reach or the spec forbids, naming the field', async () => {
    const t = await makeApp();
    expect((await t.admin('POST', '/api/admin/applications', appBody())).statusCode).toBe(201);
    const cases: [string, string][] = [
      ['http://notes.example.com/logout', 'http is allowed only for loopback or private-network hosts; use https'],
      ['https://notes.example.com/logout#frag', 'must not contain a fragment'],
      ['https://user:pw@notes.example.com/logout', 'must not contain credentials'],
      ['http://169.254.169.254/latest', 'must not point at a link-local, unspecified or multicast address'],
      // Loopback, like webhooks, only with GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK=1.
      ['http://127.0.0.1:3000/logout', 'must not point at a loopback address (GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK=1 allows it)'],
      ['ftp://notes.example.com/logout', 'must be an absolute http(s) URL'],
      ['/relative', 'must be an absolute http(s) URL'],
    ];
    for (const [uri, message] of cases) {
      expectFieldError(await t.admin('PATCH', '/api/admin/applications/notes', { backchannelLogoutUri: uri }), 'body.backchannelLogoutUri', message);
    }
    expectProblem(await t.admin('PATCH', '/api/admin/applications/notes', { backchannelLogoutSessionRequired: 'yes' }), 400, 'validation_failed');
  });
});

describe('API keys', () => {
  it('need the admin token for grantTypes and webhooks:write for the logout settings', async () => {
    const t = await makeApp();
    expect((await t.admin('POST', '/api/admin/applications', appBody())).statusCode).toBe(201);
    const appOnly = (await t.admin('POST', '/api/admin/applications/notes/api-keys', { name: 'ci', scopes: ['application:read', 'application:write'] })).json().key;
    const withHooks = (await t.admin('POST', '/api/admin/applications/notes/api-keys', { name: 'hooks', scopes: ['application:write', 'webhooks:write'] })).json().key;
    const as = (key: string, body: unknown) => t.admin('PATCH', '/api/admin/applications/notes', body, { authorization: `Bearer ${key}` });
    expectProblem(await as(withHooks, { grantTypes: [CC] }), 403, 'insufficient_scope');
    expectProblem(await as(appOnly, { backchannelLogoutUri: 'https://notes.example.com/bcl' }), 403, 'insufficient_scope');
    expectProblem(await as(appOnly, { backchannelLogoutSessionRequired: false }), 403, 'insufficient_scope');
    expect((await as(withHooks, { backchannelLogoutUri: 'https://notes.example.com/bcl' })).statusCode).toBe(200);
    // Naming the current value changes nothing and needs nothing more.
    expect((await as(appOnly, { grantTypes: ['refresh_token', 'authorization_code'], name: 'Notes 2' })).statusCode).toBe(200);
    // The delivery log reads with webhooks:read.
    const reader = (await t.admin('POST', '/api/admin/applications/notes/api-keys', { name: 'r', scopes: ['webhooks:read'] })).json().key;
    const log = await t.admin('GET', '/api/admin/applications/notes/backchannel-logouts', undefined, { authorization: `Bearer ${reader}` });
    expect(log.statusCode).toBe(200);
    expect(log.json()).toEqual({ deliveries: [], nextCursor: null });
    expectProblem(await t.admin('GET', '/api/admin/applications/notes/backchannel-logouts', undefined, { authorization: `Bearer ${appOnly}` }), 403, 'insufficient_scope');

    // A failed attempt: the administrator sees how, an API key only that it failed (no port probing).
    const now = t.clock.now();
    await exec(t.db.insert(backchannelLogouts).values({
      id: 'bcl_failed', applicationId: 'notes', subject: 'usr_x', sessionId: null, reason: 'sign_out', status: 'failed', attempts: 8,
      nextAttemptAt: now, lastAttemptAt: now, lastStatusCode: null, lastError: 'request failed: ECONNREFUSED', createdAt: now,
    }));
    const asAdmin = (await t.admin('GET', '/api/admin/applications/notes/backchannel-logouts')).json().deliveries[0];
    expect(asAdmin).toMatchObject({ id: 'bcl_failed', lastStatusCode: null, lastError: 'request failed: ECONNREFUSED' });
    const asKey = (await t.admin('GET', '/api/admin/applications/notes/backchannel-logouts', undefined, { authorization: `Bearer ${reader}` })).json().deliveries[0];
    expect(asKey).toMatchObject({ id: 'bcl_failed', lastStatusCode: null, lastError: 'delivery_failed' });
  });
});

describe('the OpenAPI document', () => {
  it('describes the new fields and the delivery log', async () => {
    const t = await makeApp();
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    // The create body is one of two shapes (a plain application, or one from a preset): the plain one carries the fields.
    const create = doc.paths['/api/admin/applications'].post.requestBody.content['application/json'].schema.anyOf[0].properties;
    expect(create.grantTypes.items.anyOf.map((s: { enum: string[] }) => s.enum[0])).toEqual(['authorization_code', 'refresh_token', CC, DEVICE]);
    expect(create.backchannelLogoutUri.description).toMatch(/^Where logout tokens are POSTed/);
    expect(create.backchannelLogoutSessionRequired.type).toBe('boolean');
    const log = doc.paths['/api/admin/applications/{id}/backchannel-logouts'].get;
    expect(Object.keys(log.responses)).toEqual(expect.arrayContaining(['200', '401', '403', '404']));
    const record = log.responses['200'].content['application/json'].schema.properties.deliveries.items.properties;
    expect(Object.keys(record)).toEqual([
      'id', 'status', 'reason', 'subject', 'sessionId', 'attempts', 'lastStatusCode', 'lastError', 'lastAttemptAt', 'nextAttemptAt', 'createdAt', 'deliveredAt',
    ]);
  });
});
