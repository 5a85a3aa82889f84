/** Auth policy admin API (DESIGN §4.4): GET and PATCH `/api/admin/applications/:id/auth-policy`. */
import { describe, expect, it } from 'vitest';
import { appBody, makeApp } from '../helpers/app.js';
import { expectProblem, expectValidation } from '../helpers/problem.js';
import { auditLog } from '../../server/db/schema.js';

const URL = '/api/admin/applications/notes/auth-policy';

async function withApp() {
  const t = await makeApp({ clock: new Date('2026-03-01T10:00:00Z') });
  expect((await t.admin('POST', '/api/admin/applications', appBody())).statusCode).toBe(201);
  return t;
}

describe('GET /api/admin/applications/:id/auth-policy', () => {
  it('returns the default policy of a new application', async () => {
    const t = await withApp();
    const res = await t.admin('GET', URL);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json()).toEqual({ signup_policy: 'invite_only', allowed_providers: ['email'], profile_fields: [], mfa: 'optional' });
  });

  it('answers 404 application_not_found for an unknown application', async () => {
    const t = await makeApp();
    expectProblem(await t.admin('GET', '/api/admin/applications/ghost/auth-policy'), 404, 'application_not_found');
    expectProblem(await t.admin('PATCH', '/api/admin/applications/ghost/auth-policy', { signup_policy: 'open' }), 404, 'application_not_found');
  });
});

describe('PATCH /api/admin/applications/:id/auth-policy', () => {
  it('changes only the given keys, returns the whole policy, and audits the change', async () => {
    const t = await withApp();
    const open = await t.admin('PATCH', URL, { signup_policy: 'open' });
    expect(open.statusCode).toBe(200);
    expect(open.json()).toEqual({ signup_policy: 'open', allowed_providers: ['email'], profile_fields: [], mfa: 'optional' });

    const providers = await t.admin('PATCH', URL, { allowed_providers: ['email', 'google', 'oidc'] });
    expect(providers.json()).toEqual({ signup_policy: 'open', allowed_providers: ['email', 'google', 'oidc'], profile_fields: [], mfa: 'optional' });
    expect((await t.admin('GET', URL)).json()).toEqual(providers.json());
    expect((await t.admin('GET', '/api/admin/applications/notes')).json().authPolicy).toEqual(providers.json());

    for (const value of ['open', 'invite_only', 'closed']) {
      expect((await t.admin('PATCH', URL, { signup_policy: value })).json().signup_policy).toBe(value);
    }
    // An empty list of providers is allowed (nobody can sign in until one is added).
    expect((await t.admin('PATCH', URL, { allowed_providers: [] })).json().allowed_providers).toEqual([]);
    // Like any PATCH, it must change something.
    expectValidation(await t.admin('PATCH', URL, {}), ['body']);

    const actions = t.db.select().from(auditLog).all().map((a) => a.action);
    expect(actions.filter((a) => a === 'auth_policy.updated')).toHaveLength(6);
  });

  it('answers 400 naming unknown providers, duplicates and bad signup policies', async () => {
    const t = await withApp();
    const unknown = expectValidation(await t.admin('PATCH', URL, { allowed_providers: ['email', 'myspace', 'facebook'] }), [
      'body.allowed_providers.1',
      'body.allowed_providers.2',
    ]);
    expect(unknown.errors).toContainEqual({ path: 'body.allowed_providers.1', message: 'unknown provider "myspace"' });
    expectValidation(await t.admin('PATCH', URL, { allowed_providers: ['email', 'email'] }), ['body.allowed_providers']);
    expectValidation(await t.admin('PATCH', URL, { signup_policy: 'everyone' }), ['body.signup_policy']);
    expectValidation(await t.admin('PATCH', URL, { allowed_providers: 'email' }), ['body.allowed_providers']);
    expectValidation(await t.admin('PATCH', URL, { profileFields: [] }), ['body.profileFields']);
    // Nothing was stored by the failures.
    expect((await t.admin('GET', URL)).json()).toEqual({ signup_policy: 'invite_only', allowed_providers: ['email'], profile_fields: [], mfa: 'optional' });
  });

  it('replaces the profile field list, filling defaults for required and user_editable', async () => {
    const t = await withApp();
    const fields = [
      { key: 'department', label: 'Department', type: 'select', options: ['eng', 'ops'], required: true },
      { key: 'age', label: 'Age', type: 'integer', min: 0, max: 150, user_editable: false },
      { key: 'bio', label: 'Bio', type: 'text', max_length: 500, description: 'About you' },
      { key: 'site', label: 'Website', type: 'url' },
      { key: 'newsletter', label: 'Newsletter', type: 'boolean' },
      { key: 'born', label: 'Born', type: 'date' },
      { key: 'mail2', label: 'Other mail', type: 'email' },
      { key: 'score', label: 'Score', type: 'number', min: -1.5 },
      { key: 'nick', label: 'Nickname', type: 'string' },
    ];
    const res = await t.admin('PATCH', URL, { profile_fields: fields });
    expect(res.statusCode).toBe(200);
    expect(res.json().profile_fields).toEqual([
      { key: 'department', label: 'Department', type: 'select', options: ['eng', 'ops'], required: true, user_editable: true },
      { key: 'age', label: 'Age', type: 'integer', min: 0, max: 150, required: false, user_editable: false },
      { key: 'bio', label: 'Bio', type: 'text', max_length: 500, description: 'About you', required: false, user_editable: true },
      { key: 'site', label: 'Website', type: 'url', required: false, user_editable: true },
      { key: 'newsletter', label: 'Newsletter', type: 'boolean', required: false, user_editable: true },
      { key: 'born', label: 'Born', type: 'date', required: false, user_editable: true },
      { key: 'mail2', label: 'Other mail', type: 'email', required: false, user_editable: true },
      { key: 'score', label: 'Score', type: 'number', min: -1.5, required: false, user_editable: true },
      { key: 'nick', label: 'Nickname', type: 'string', required: false, user_editable: true },
    ]);
    // Other keys untouched; a later list replaces the whole list.
    expect(res.json().signup_policy).toBe('invite_only');
    const replaced = await t.admin('PATCH', URL, { profile_fields: [{ key: 'nick', label: 'Nick', type: 'string' }] });
    expect(replaced.json().profile_fields).toEqual([{ key: 'nick', label: 'Nick', type: 'string', required: false, user_editable: true }]);
    expect((await t.admin('PATCH', URL, { profile_fields: [] })).json().profile_fields).toEqual([]);
  });

  it('validates profile field definitions, naming each bad entry', async () => {
    const t = await withApp();
    const cases: [unknown[], string[]][] = [
      // select needs options
      [[{ key: 'team', label: 'Team', type: 'select' }], ['body.profile_fields.0.options']],
      [[{ key: 'team', label: 'Team', type: 'select', options: [] }], ['body.profile_fields.0.options']],
      [[{ key: 'team', label: 'Team', type: 'select', options: ['a', 'a'] }], ['body.profile_fields.0.options']],
      // options only on select
      [[{ key: 'team', label: 'Team', type: 'string', options: ['a'] }], ['body.profile_fields.0.options']],
      // duplicate keys
      [
        [
          { key: 'team', label: 'Team', type: 'string' },
          { key: 'team', label: 'Team again', type: 'string' },
        ],
        ['body.profile_fields.1.key'],
      ],
      // min > max, min/max only for numbers
      [[{ key: 'age', label: 'Age', type: 'integer', min: 10, max: 1 }], ['body.profile_fields.0.min']],
      [[{ key: 'name2', label: 'N', type: 'string', min: 1 }], ['body.profile_fields.0.min']],
      [[{ key: 'flag', label: 'F', type: 'boolean', max_length: 5 }], ['body.profile_fields.0.max_length']],
      // key pattern, type, label, unknown property, missing fields
      [[{ key: '1abc', label: 'x', type: 'string' }], ['body.profile_fields.0.key']],
      [[{ key: 'has-dash', label: 'x', type: 'string' }], ['body.profile_fields.0.key']],
      [[{ key: 'k'.repeat(65), label: 'x', type: 'string' }], ['body.profile_fields.0.key']],
      [[{ key: 'ok', label: 'x', type: 'colour' }], ['body.profile_fields.0.type']],
      [[{ key: 'ok', label: '', type: 'string' }], ['body.profile_fields.0.label']],
      [[{ key: 'ok', label: 'x', type: 'string', placeholder: 'y' }], ['body.profile_fields.0.placeholder']],
      [[{ key: 'ok' }], ['body.profile_fields.0.label', 'body.profile_fields.0.type']],
      [[{ key: 'ok', label: 'x', type: 'string', required: 'yes' }], ['body.profile_fields.0.required']],
      [[{ key: 'ok', label: 'x', type: 'string', max_length: 0 }], ['body.profile_fields.0.max_length']],
    ];
    for (const [fields, paths] of cases) {
      const res = await t.admin('PATCH', URL, { profile_fields: fields });
      expect(res.statusCode, JSON.stringify(fields)).toBe(400);
      expectValidation(res, paths);
    }
    const tooMany = Array.from({ length: 51 }, (_, i) => ({ key: `f${i}`, label: `F${i}`, type: 'string' }));
    expectValidation(await t.admin('PATCH', URL, { profile_fields: tooMany }), ['body.profile_fields']);
    expect((await t.admin('GET', URL)).json().profile_fields).toEqual([]);
  });
});
