/**
 * Display names and profile text everywhere they enter (issue 22, item 7): sign-up (JSON and the
 * hosted form), application, SSO-group and API-key names, profile field definitions, invitation
 * messages and profile values, by administrators and by the person. Each refusal is a 400 naming
 * the field; nothing is written.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { people } from '../../server/db/schema.js';
import { makeApp, type TestApp } from '../helpers/app.js';
import { createApplication, signUp } from '../helpers/accounts.js';
import { addMember } from '../helpers/members.js';
import { csrfFrom, openPage, postForm } from '../helpers/pages.js';
import { expectValidation } from '../helpers/problem.js';
import { me, signedUpCookie } from '../helpers/self-service.js';
import { many } from '../../server/db/store.js';

const RLO = 'admin\u202Egnp.exe';
const NUL = 'Ada\u0000Lovelace';
const ZALGO = `Z${'\u0301'.repeat(12)}algo`;
const FIELDS = [
  { key: 'nickname', label: 'Nickname', type: 'string', required: false, user_editable: true },
  { key: 'bio', label: 'About you', type: 'text', required: false, user_editable: true },
];

let t: TestApp;
beforeAll(async () => {
  t = await makeApp({ perFile: true, config: { env: { GATEHOUSE_SIGN_UP_RATE_LIMIT: '100' } } });
  await createApplication(t, { id: 'notes', name: 'Notes', authPolicy: { signup_policy: 'open', profile_fields: FIELDS } });
});

describe('names and text are checked where they enter', () => {
  it('sign-up by JSON and by the hosted form refuses a name with controls, bidi overrides or stacked marks', async () => {
    for (const name of [RLO, NUL, ZALGO, 'Ada\nLovelace']) {
      const body = expectValidation(await signUp(t, { email: 'mallory@example.com', name, applicationId: 'notes' }), ['body.name']);
      expect(body.errors![0]!.message).toMatch(/^must (not contain control characters|not contain bidirectional override or isolate characters|not stack more than 4 combining marks on one character)$/);
    }
    const page = await openPage(t, '/sign-up?client_id=notes');
    const res = await postForm(t, '/sign-up', { csrf_token: csrfFrom(page.res), client_id: 'notes', name: RLO, email: 'mallory@example.com', password: 'correct horse battery' }, page.cookie);
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('Name: must not contain bidirectional override or isolate characters');
    expect((await many(t.db.select().from(people))).map((p) => p.email)).not.toContain('mallory@example.com');
    // Real names of other scripts are fine.
    expect((await signUp(t, { email: 'nguyen@example.com', name: 'Nguyễn Văn A', applicationId: 'notes' })).statusCode).toBe(201);
  });

  it('administrators get 400 naming the field for application, group, key and profile-field names and invitation messages', async () => {
    expectValidation(await t.admin('POST', '/api/admin/applications', { id: 'wiki', name: RLO, audience: 'https://wiki.example', redirectUris: ['https://wiki.example/cb'] }), ['body.name']);
    expectValidation(await t.admin('PATCH', '/api/admin/applications/notes', { name: NUL }), ['body.name']);
    expectValidation(await t.admin('POST', '/api/admin/sso-groups', { id: 'suite', name: ZALGO }), ['body.name']);
    expectValidation(await t.admin('POST', '/api/admin/applications/notes/api-keys', { name: RLO, scopes: ['users:read'] }), ['body.name']);
    expectValidation(
      await t.admin('PATCH', '/api/admin/applications/notes/auth-policy', { profile_fields: [{ key: 'x', label: RLO, type: 'select', options: ['a', NUL], description: ZALGO }] }),
      ['body.profile_fields.0.label', 'body.profile_fields.0.options.1', 'body.profile_fields.0.description'],
    );
    expectValidation(await t.admin('POST', '/api/admin/applications/notes/invitations', { emails: ['bob@example.com'], message: `Hi\u202E` }), ['body.message']);
    // A message keeps its line breaks.
    expect((await t.admin('POST', '/api/admin/applications/notes/invitations', { emails: ['bob@example.com'], message: 'Welcome,\nthe team' })).statusCode).toBe(201);
  });

  it('profile values: string fields are one line, text fields may break lines; both refuse controls and overrides, for admins and the person', async () => {
    const cookie = await signedUpCookie(t, 'ada@example.com', 'notes');
    expectValidation(await me(t, 'PATCH', '/api/me/applications/notes/profile', cookie, { profile: { nickname: RLO, bio: `Hi\u0000` } }), ['body.profile.nickname', 'body.profile.bio']);
    expectValidation(await me(t, 'PATCH', '/api/me/applications/notes/profile', cookie, { profile: { nickname: 'Ada\nL' } }), ['body.profile.nickname']);
    const ok = await me(t, 'PATCH', '/api/me/applications/notes/profile', cookie, { profile: { nickname: 'Ада', bio: 'Line one\nLine two' } });
    expect(ok.statusCode, ok.body).toBe(200);
    const { membership } = (await addMember(t, 'notes', 'carol@example.com'));
    expectValidation(await t.admin('PATCH', `/api/admin/applications/notes/users/${membership.id}`, { profile: { bio: ZALGO } }), ['body.profile.bio']);
  });
});
