/**
 * The plugin API (server/plugin-api/, docs/architecture.md "How to add a protocol plugin"), proved
 * with a plugin of the test's own set up beside the built-in ones on one real server: an
 * application field with a secret shown once, what every hook announces and when, a token's
 * claims and lifetime contributed, admin routes with their rule and an admin credential, a sign-in
 * source, change guards, /api/me routes, the overview's and the set-up text's parts, a browser
 * flow the sign-in page resumes, and an account-page section's form routes. The built-in plugins
 * are the API's other users (their own tests).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import { decodeJwt } from 'jose';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { makeApp, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';
import { PASSWORD, cookieValue, createApplication, postJson, sessionCookieOf, signIn, signUp } from '../helpers/accounts.js';
import { setUpClients, spaTokens, token } from '../helpers/oauth-inject.js';
import type { GatehousePlugin } from '../../server/context.js';
import type { HookEvents, HookName } from '../../server/plugin-api/hooks.js';
import type { ApplicationField } from '../../server/plugin-api/application-fields.js';
import { needs } from '../../server/http/admin-policy.js';
import { conflict } from '../../server/http/problem.js';
import { insertPerson } from '../../server/people/create.js';
import { hashPassword } from '../../server/accounts/passwords.js';

/** What the hooks announced, in order: the event's name and what the test checks of it. */
const heard: { name: HookName; detail: Record<string, unknown> }[] = [];
/** The test field's values (its "table"), by application id. */
const widgets = new Map<string, { colour: string; secretHash: string | null }>();

const WidgetInput = Type.Object({ colour: Type.String({ minLength: 1, maxLength: 20 }) }, { additionalProperties: false });
const WidgetRecord = Type.Union([Type.Object({ colour: Type.String(), secretSet: Type.Boolean() }, { additionalProperties: false }), Type.Null()]);

const widgetField: ApplicationField<{ colour: string }> = {
  name: 'widget',
  after: 'consent',
  input: WidgetInput,
  record: WidgetRecord,
  secrets: { widgetSecret: Type.String() },
  load: async (_db, ids) => new Map(ids.filter((id) => widgets.has(id)).map((id) => [id, widgets.get(id)])),
  toRecord: (_app, loaded) => {
    const value = loaded as { colour: string; secretHash: string | null } | undefined;
    return value ? { colour: value.colour, secretSet: value.secretHash !== null } : null;
  },
  prepare({ id, given, current, errors }) {
    if (given === undefined) return undefined;
    if (given.colour === 'plaid') {
      errors.push({ path: 'body.widget.colour', message: 'plaid is not a colour' });
      return undefined;
    }
    // A new widget gets a secret, shown once; a changed colour keeps it.
    const secret = widgets.has(id) ? undefined : `wgt_${id}`;
    return {
      ...(secret ? { secrets: { widgetSecret: secret } } : {}),
      ...(current ? { audit: { widgetChanged: true } } : {}),
      written: async () => {
        widgets.set(id, { colour: given.colour, secretHash: secret ? `#${secret}` : (widgets.get(id)?.secretHash ?? null) });
      },
    };
  },
  deleted: async (_tx, id) => {
    widgets.delete(id);
  },
  keyMayNot: (current, given) => (widgets.get(current.id)?.colour !== given.colour ? 'repaint the widget' : undefined),
};

const adminRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/widgets/:id', { schema: { params: Type.Object({ id: Type.String() }), response: { 200: Type.Object({ colour: Type.String() }) } } }, async (request) => ({
    colour: widgets.get(request.params.id)?.colour ?? 'none',
  }));
  app.post('/widgets', { schema: { body: Type.Object({ colour: Type.String() }) } }, async (request, reply) => reply.status(201).send({ made: request.body.colour }));
};

/** A source that keeps the passwords of people whose username starts with `src-` (as a directory source would). */
const SOURCE_PASSWORD = 'the source knows this one';

const testPlugin: GatehousePlugin = {
  name: 'test-plugin',
  setup(ctx) {
    const { hooks, registries } = ctx;
    for (const name of ['applicationChanged', 'sessionsEnded', 'personStatusChanged', 'personDeleted', 'membershipChanged', 'groupsChanged'] as const) {
      hooks.on(name, (event: HookEvents[typeof name]) => {
        const { tx: _tx, now: _now, ...rest } = event as HookEvents[typeof name] & { person?: { id: string } };
        heard.push({ name, detail: 'person' in rest ? { ...rest, person: rest.person!.id } : rest });
      });
    }
    hooks.onTokenIssuing((token) => {
      if (token.client.id !== 'notes') return;
      token.claims.widget = widgets.get('notes')?.colour ?? 'none';
      token.ttlSeconds = 120;
    });
    registries.applicationFields.add(widgetField as ApplicationField<never>);
    registries.adminRoutes.add({ name: 'widgets', routes: adminRoutes, policy: { 'GET /widgets/:id': needs.app('application'), 'POST /widgets': needs.people } });
    registries.adminCredentials.add({
      name: 'test-credential',
      authenticate: async (token) => (token === 'people-manager-credential' ? { type: 'person', personId: 'nobody', role: 'people_manager', applications: [], sessionId: 's' } : undefined),
    });
    registries.signInSources.add({
      name: 'test-source',
      owns: (person) => person.username.startsWith('src-'),
      verify: async (_person, password) => (password === SOURCE_PASSWORD ? 'valid' : 'invalid'),
      discover: async (login, password) => {
        if (login !== 'found@example.com' || password !== SOURCE_PASSWORD) return undefined;
        return insertPerson(ctx.db, ctx.clock.now(), { email: login, name: 'Found', username: 'src-found', passwordHash: null, emailVerified: true });
      },
    });
    registries.guards.add({
      name: 'test-guard',
      group: (_tx, group, change) => {
        if (group.id === 'kept' && change.kind !== 'members') throw conflict('managed_by_source', 'The group "kept" is kept by the test source.');
      },
      person: (_tx, person, change) => {
        if (person.username.startsWith('src-') && change.kind === 'password') throw conflict('managed_by_source', 'This password is kept by the test source.');
      },
    });
    registries.meRoutes.add({
      name: 'widgets',
      routes: (app, meOf) => app.get('/widgets', { schema: { hide: true } }, async (request) => ({ email: meOf(request).person.email })),
    });
    registries.overviewSections.add({ name: 'widgets', schema: Type.Object({ made: Type.Integer() }, { additionalProperties: false }), value: () => ({ made: widgets.size }) });
    registries.setupSections.add({
      name: 'widget',
      schema: Type.Union([Type.Object({ colour: Type.String(), where: Type.String() }, { additionalProperties: false }), Type.Null()]),
      query: { where: Type.String({ pattern: '^/[a-z/]*$' }) },
      value: (app, query) => (widgets.has(app.id) ? { colour: widgets.get(app.id)!.colour, where: query.where ?? '/' } : null),
    });
    registries.browserFlows.add({ name: 'widget-flow', resumePrefix: '/widget-flow?', formActionSources: (app) => (widgets.has(app.id) ? ['https://widgets.example'] : []) });
    registries.accountSections.add({
      name: 'widget-notes',
      after: 'security',
      notices: ['widget_noted'],
      view: () => undefined,
      routes(app, forms) {
        app.post('/account/widget-notes', { schema: { hide: true, body: Type.Object({ csrf_token: Type.Optional(Type.String()), note: Type.Optional(Type.String()) }) } }, async (request, reply) => {
          const body = request.body as { csrf_token?: string; note?: string };
          const me = await forms.caller(request, body.csrf_token);
          if (!me) return forms.back(reply, 'signed_out');
          const refused = await forms.act(request, reply, 'widget-notes', () => {
            if (!body.note) throw conflict('note_missing', 'Write a note.');
          });
          return refused ?? forms.back(reply, 'widget_noted', 'widget-notes');
        });
      },
    });
  },
};

let t: TestApp;
beforeAll(async () => {
  t = await makeApp({ perFile: true, deps: { plugins: [testPlugin] } });
});

const eventsSince = (from: number) => heard.slice(from).map((e) => e.name);

describe('an application field of a plugin', () => {
  it('is in the create, PATCH and record schemas of the OpenAPI document, after the field it names', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    const post = doc.paths['/api/admin/applications'].post;
    const create = post.requestBody.content['application/json'].schema.anyOf[0];
    const keys = Object.keys(create.properties);
    // After `consent`, as forward auth's field is: the one registered later stands after it.
    expect(keys.slice(keys.indexOf('consent'), keys.indexOf('consent') + 3)).toEqual(['consent', 'forwardAuth', 'widget']);
    expect(Object.keys(post.responses['201'].content['application/json'].schema.properties)).toContain('widgetSecret');
    const record = doc.paths['/api/admin/applications/{id}'].get.responses['200'].content['application/json'].schema;
    expect(Object.keys(record.properties).slice(Object.keys(record.properties).indexOf('consent'), Object.keys(record.properties).indexOf('consent') + 3)).toEqual(['consent', 'forwardAuth', 'widget']);
  });

  it('is checked with the core fields, written in the create, shown once with its secret, and read back', async () => {
    const from = heard.length;
    const refused = await t.admin('POST', '/api/admin/applications', { id: 'board', name: 'Board', audience: 'https://board.example', redirectUris: ['nope'], widget: { colour: 'plaid' } });
    expectProblem(refused, 400, 'validation_failed');
    expect(refused.json().errors.map((e: { path: string }) => e.path)).toEqual(['body.redirectUris.0', 'body.widget.colour']);
    expect(widgets.has('board')).toBe(false);
    const created = await createApplication(t, { id: 'board', audience: 'https://board.example', widget: { colour: 'teal' } });
    expect(created.widget).toEqual({ colour: 'teal', secretSet: true });
    expect(created.widgetSecret).toBe('wgt_board');
    expect(heard.slice(from)).toEqual([{ name: 'applicationChanged', detail: { applicationId: 'board', change: 'created', actor: 'admin' } }]);
    expect((await t.admin('GET', '/api/admin/applications/board')).json().widget).toEqual({ colour: 'teal', secretSet: true });
    const listed = (await t.admin('GET', '/api/admin/applications')).json().applications.find((a: { id: string }) => a.id === 'board');
    expect(listed.widget).toEqual({ colour: 'teal', secretSet: true });
    expect(listed.widgetSecret).toBeUndefined();
  });

  it('changes on PATCH without showing the secret again, audits what the field says, and goes with the application', async () => {
    const patched = await t.admin('PATCH', '/api/admin/applications/board', { widget: { colour: 'ochre' } });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().widget).toEqual({ colour: 'ochre', secretSet: true });
    expect(patched.json().widgetSecret).toBeUndefined();
    const audit = (await t.admin('GET', '/api/admin/audit-log?action=application.updated')).json();
    expect(audit.entries[0].details).toMatchObject({ fields: ['widget'], widgetChanged: true });
    // An API key may change the application, not what the field keeps for administrators.
    const key = (await t.admin('POST', '/api/admin/applications/board/api-keys', { name: 'ci', scopes: ['application:write'] })).json().key;
    const byKey = await t.admin('PATCH', '/api/admin/applications/board', { widget: { colour: 'red' } }, { authorization: `Bearer ${key}` });
    expectProblem(byKey, 403, 'insufficient_scope');
    expect(byKey.json().detail).toContain('repaint the widget');
    const from = heard.length;
    expect((await t.admin('DELETE', '/api/admin/applications/board')).statusCode).toBe(204);
    expect(widgets.has('board')).toBe(false);
    expect(eventsSince(from)).toEqual(['applicationChanged']);
  });
});

describe('the hooks', () => {
  it('announce sessions ended, memberships changed and people disabled and deleted, inside the change', async () => {
    const clients = await setUpClients(t);
    await createApplication(t, { id: 'keep', audience: 'https://keep.example' });
    const ada = (await t.admin('GET', '/api/admin/people?q=ada')).json().people[0];
    const member = (await t.admin('GET', '/api/admin/applications/notes/users')).json().users[0];
    let from = heard.length;
    expect((await t.admin('PATCH', `/api/admin/applications/notes/users/${member.id}`, { status: 'suspended' })).statusCode).toBe(200);
    expect(heard.slice(from)).toEqual([
      { name: 'sessionsEnded', detail: { personId: ada.id, sessionIds: [], applicationId: 'notes', reason: 'membership_suspended' } },
      { name: 'membershipChanged', detail: { applicationId: 'notes', personId: ada.id, status: 'suspended', role: 'member', actor: 'admin' } },
    ]);
    from = heard.length;
    expect((await t.admin('PATCH', `/api/admin/people/${ada.id}`, { status: 'disabled' })).statusCode).toBe(200);
    expect(heard.slice(from).map((e) => [e.name, e.detail.reason ?? e.detail.status])).toEqual([['sessionsEnded', 'person_disabled'], ['personStatusChanged', 'disabled']]);
    expect((heard.at(-2)!.detail.sessionIds as string[]).length).toBe(1);
    from = heard.length;
    expect((await t.admin('DELETE', `/api/admin/people/${ada.id}`)).statusCode).toBe(204);
    expect(heard.slice(from)).toEqual([
      { name: 'sessionsEnded', detail: { personId: ada.id, sessionIds: [], applicationId: undefined, reason: 'person_deleted' } },
      { name: 'personDeleted', detail: { person: ada.id, actor: 'admin' } },
    ]);
    expect(clients.spa.id).toBe('notes');
  });

  it('announce directory groups created, changed and their members; a guard refuses a change', async () => {
    const from = heard.length;
    expect((await t.admin('POST', '/api/admin/groups', { id: 'kept', name: 'Kept' })).statusCode).toBe(201);
    const res = await signUp(t, { email: 'gus@example.com', name: 'Gus', applicationId: 'notes' });
    const gus = res.json().user.id;
    expect((await t.admin('PUT', `/api/admin/groups/kept/members/${gus}`)).statusCode).toBe(204);
    expect((await t.admin('DELETE', `/api/admin/groups/kept/members/${gus}`)).statusCode).toBe(204);
    expect(heard.slice(from).filter((e) => e.name === 'groupsChanged').map((e) => e.detail)).toEqual([
      { groupIds: ['kept'], personIds: [], actor: 'admin' },
      { groupIds: ['kept'], personIds: [gus], actor: 'admin' },
      { groupIds: ['kept'], personIds: [gus], actor: 'admin' },
    ]);
    expectProblem(await t.admin('PATCH', '/api/admin/groups/kept', { name: 'Renamed' }), 409, 'managed_by_source');
    expectProblem(await t.admin('DELETE', '/api/admin/groups/kept'), 409, 'managed_by_source');
    expect((await t.admin('GET', '/api/admin/groups/kept')).json().name).toBe('Kept');
  });

  it('let a plugin add claims to a token about to be issued and shorten its life', async () => {
    const signed = await signUp(t, { email: 'tia@example.com', name: 'Tia', applicationId: 'notes' });
    const cookie = `gatehouse_session=${sessionCookieOf(signed)}`;
    widgets.set('notes', { colour: 'indigo', secretHash: null });
    const tokens = await spaTokens(t, cookie);
    expect(tokens.expires_in).toBe(120);
    const claims = decodeJwt(tokens.access_token);
    expect(claims.widget).toBe('indigo');
    expect(claims.exp! - claims.iat!).toBe(120);
    widgets.set('notes', { colour: 'amber', secretHash: null });
    const refreshed = await token(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: 'notes' });
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    expect(refreshed.json().expires_in).toBe(120);
    expect(decodeJwt(refreshed.json().access_token).widget).toBe('amber');
    widgets.delete('notes');
  });
});

describe('the registries', () => {
  it('admin routes carry their rule: a people manager may post, reading an application is the owner\'s or its managers\'', async () => {
    const viaCredential = { authorization: 'Bearer people-manager-credential' };
    const posted = await t.admin('POST', '/api/admin/widgets', { colour: 'blue' }, viaCredential);
    expect(posted.statusCode, posted.body).toBe(201);
    expect(posted.json()).toEqual({ made: 'blue' });
    expectProblem(await t.admin('GET', '/api/admin/widgets/notes', undefined, viaCredential), 403, 'forbidden');
    expect((await t.admin('GET', '/api/admin/widgets/notes')).json()).toEqual({ colour: 'none' });
    expectProblem(await t.admin('GET', '/api/admin/widgets/notes', undefined, { authorization: 'Bearer not-a-credential' }), 401, 'unauthorized');
  });

  it('a sign-in source checks the passwords it keeps, finds people nobody has yet, and its guard keeps their password', async () => {
    const passwordHash = await hashPassword(PASSWORD);
    await insertPerson(t.db, t.clock.now(), { email: 'sam@example.com', name: 'Sam', username: 'src-sam', passwordHash, emailVerified: true });
    // The stored hash is not what counts for a person the source keeps.
    expectProblem(await signIn(t, { email: 'sam@example.com' }), 401, 'invalid_credentials');
    const signedIn = await signIn(t, { email: 'sam@example.com', password: SOURCE_PASSWORD });
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    const cookie = `gatehouse_session=${sessionCookieOf(signedIn)}`;
    const change = await postJson(t, '/api/me/password', { currentPassword: SOURCE_PASSWORD, newPassword: 'an entirely new passphrase' }, { cookie, origin: t.config.issuer });
    expectProblem(change, 409, 'managed_by_source');
    const found = await signIn(t, { email: 'found@example.com', password: SOURCE_PASSWORD });
    expect(found.statusCode, found.body).toBe(200);
    expect(found.json().user.username).toBe('src-found');
    expectProblem(await signIn(t, { email: 'nobody@example.com', password: SOURCE_PASSWORD }), 401, 'invalid_credentials');
  });

  it('/api/me routes, the overview\'s part and the set-up text\'s part are the plugin\'s', async () => {
    const signed = await signUp(t, { email: 'uma@example.com', name: 'Uma', applicationId: 'notes' });
    const me = await t.app.inject({ method: 'GET', url: '/api/me/widgets', headers: { cookie: `gatehouse_session=${sessionCookieOf(signed)}` } });
    expect(me.json()).toEqual({ email: 'uma@example.com' });
    expectProblem(await t.app.inject({ method: 'GET', url: '/api/me/widgets' }), 401, 'unauthorized');
    expect((await t.admin('GET', '/api/admin/overview')).json().widgets).toEqual({ made: widgets.size });
    await createApplication(t, { id: 'wiki', audience: 'https://wiki.example', widget: { colour: 'green' } });
    expect((await t.admin('GET', '/api/admin/applications/wiki/setup?where=/etc/widgets')).json().widget).toEqual({ colour: 'green', where: '/etc/widgets' });
    expect((await t.admin('GET', '/api/admin/applications/billing/setup')).json().widget).toBeNull();
    expectProblem(await t.admin('GET', '/api/admin/applications/wiki/setup?where=C:'), 400, 'validation_failed');
  });

  it('the sign-in page resumes a plugin\'s browser flow and lets its form answer go to the flow\'s targets', async () => {
    const page = await t.app.inject({ method: 'GET', url: `/sign-in?client_id=wiki&return_to=${encodeURIComponent('/widget-flow?x=1')}` });
    expect(page.statusCode, page.body).toBe(200);
    expect(page.body).toContain('value="/widget-flow?x=1"');
    expect(page.headers['content-security-policy']).toContain("form-action 'self' https://widgets.example");
    const elsewhere = await t.app.inject({ method: 'GET', url: `/sign-in?return_to=${encodeURIComponent('/not-a-flow?x=1')}` });
    expect(elsewhere.body).not.toContain('/not-a-flow');
  });

  it('an account-page section\'s forms have the page\'s CSRF rule, refusals and notices', async () => {
    const signed = await signUp(t, { email: 'vic@example.com', name: 'Vic', applicationId: 'notes' });
    const session = sessionCookieOf(signed);
    const page = await t.app.inject({ method: 'GET', url: '/account', headers: { cookie: `gatehouse_session=${session}` } });
    const csrf = cookieValue(page, 'gatehouse_csrf')!;
    const form = (note: string) => t.app.inject({
      method: 'POST', url: '/account/widget-notes',
      headers: { cookie: `gatehouse_session=${session}; gatehouse_csrf=${csrf}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ csrf_token: csrf, note }).toString(),
    });
    const done = await form('hello');
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe('/account?notice=widget_noted#widget-notes');
    const refused = await form('');
    expect(refused.statusCode).toBe(303);
    expect(refused.headers.location).toBe('/account#widget-notes');
    const forged = await t.app.inject({
      method: 'POST', url: '/account/widget-notes',
      headers: { cookie: `gatehouse_session=${session}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'csrf_token=forged&note=x',
    });
    expect(forged.statusCode).toBe(403);
  });

  it('are closed once the app is built: a late addition fails, naming where it belongs', () => {
    expect(() => t.app.ctx.registries.guards.add({ name: 'late' })).toThrow('change guard "late" was registered after start-up: register it in the plugin\'s setup');
    expect(() => t.app.ctx.registries.applicationFields.add(widgetField as ApplicationField<never>)).toThrow('after start-up');
  });
});
