import { describe, expect, it } from 'vitest';
import { appBody, makeApp } from '../helpers/app.js';

describe('applications admin API', () => {
  it('creates a web application and shows its client secret once', async () => {
    const t = await makeApp();
    const res = await t.admin('POST', '/api/admin/applications', appBody());
    expect(res.statusCode).toBe(201);
    expect(res.headers.location).toBe('/api/admin/applications/notes');
    const body = res.json();
    expect(body.clientSecret).toMatch(/^ghs_/);
    expect(body).toMatchObject({
      id: 'notes',
      clientType: 'web',
      webhookUrl: null,
      webhookSecretSet: false,
      ssoGroupId: null,
      authPolicy: { signup_policy: 'invite_only', allowed_providers: ['email'], profile_fields: [] },
    });
    const read = await t.admin('GET', '/api/admin/applications/notes');
    expect(read.statusCode).toBe(200);
    expect(read.json().clientSecret).toBeUndefined();
  });

  it('rejects unknown fields naming them', async () => {
    const t = await makeApp();
    const res = await t.admin('POST', '/api/admin/applications', appBody({ colour: 'red' }));
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: 'body.colour', message: 'is not a known field' }] });
  });

  it('answers 401 with WWW-Authenticate without a token', async () => {
    const t = await makeApp();
    const res = await t.app.inject({ method: 'GET', url: '/api/admin/applications' });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.json().code).toBe('unauthorized');
  });
});
