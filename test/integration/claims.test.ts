/**
 * Claims (spec claims-and-groups.md "Claims", "Scopes") through openid-client against a real
 * server: the standard claims per scope and the `groups` claim (sorted, kept to `groupsFilter`) in
 * the ID token and userinfo alike; custom claims of every source type, and those marked
 * `inAccessToken` in the access token; a refresh computing them again; the ID token under 8 KB
 * past 150 groups (`groups_truncated`, userinfo keeping them all); a deleted group or profile field
 * never failing issuance; `unknownScopes` both ways; the admin API's refusals and the claims
 * preview; the Grafana role mapping of docs/integrations/grafana.md, evaluated with the JMESPath
 * reference implementation (the language Grafana's role_attribute_path is written in). Groups and names are written straight into the store here: their admin API is another
 * part of the issue (people, groups).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as client from 'openid-client';
import { and, eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { readFileSync } from 'node:fs';
import jmespath from 'jmespath';
import { groupMembers, groups, memberships, people } from '../../server/db/schema.js';
import { exec, one } from '../../server/db/store.js';
import { createClient, follow, signInCookie, signUpCookie, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';

const REDIRECT = 'http://127.0.0.1:3000/callback';
const FULL = 'openid profile email groups offline_access';

let server: OAuthServer;
let secret: string;
let cookie: string;
let ada: { id: string; membershipId: string };

const db = () => server.running.db;

async function addGroups(ids: string[], personId?: string) {
  const now = new Date();
  for (const id of ids) {
    await exec(db().insert(groups).values({ id, name: id, createdAt: now, updatedAt: now }).onConflictDoNothing());
    if (personId) await exec(db().insert(groupMembers).values({ groupId: id, personId, addedAt: now }).onConflictDoNothing());
  }
}

async function patchApp(body: Record<string, unknown>, id = 'wiki') {
  const res = await server.admin('PATCH', `/api/admin/applications/${id}`, body);
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** openid-client's configuration for the confidential `wiki` application. */
async function wiki() {
  return client.discovery(new URL(server.url), 'wiki', undefined, client.ClientSecretBasic(secret), { execute: [client.allowInsecureRequests] });
}

/** One code flow through openid-client; the tokens and the ID token's claims. */
async function signIn(scope = FULL) {
  const config = await wiki();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const hop = await follow(client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope, state, nonce }), cookie);
  expect(hop.status).toBe(302);
  const tokens = await client.authorizationCodeGrant(config, hop.location!, { expectedState: state, expectedNonce: nonce, idTokenExpected: true });
  return { config, tokens, id: tokens.claims()!, access: decodeJwt(tokens.access_token) };
}

/** The claims an ID token carries about the person: all but the protocol's own. */
function personPart(claims: Record<string, unknown>) {
  const { iss, aud, exp, iat, auth_time, acr, amr, nonce, sid, at_hash, ...rest } = claims;
  void [iss, aud, exp, iat, auth_time, acr, amr, nonce, sid, at_hash];
  return rest;
}

beforeAll(async () => {
  server = await startOAuthServer();
  const created = await createClient(server, {
    id: 'wiki', name: 'Wiki', audience: 'https://wiki.example.com/api', clientType: 'web', redirectUris: [REDIRECT],
    authPolicy: { signup_policy: 'open', profile_fields: [{ key: 'team', label: 'Team', type: 'string' }, { key: 'desk', label: 'Desk', type: 'integer' }] },
  });
  secret = created.clientSecret!;
  cookie = await signUpCookie(server, 'ada@example.com', 'wiki');
  const person = (await one(db().select().from(people).where(eq(people.email, 'ada@example.com'))))!;
  const member = (await one(db().select().from(memberships).where(eq(memberships.personId, person.id))))!;
  ada = { id: person.id, membershipId: member.id };
  await exec(db().update(people).set({ givenName: 'Ada', familyName: 'Lovelace' }).where(eq(people.id, person.id)));
  await exec(db().update(memberships).set({ profile: { team: 'analytics', desk: 12 } }).where(eq(memberships.id, member.id)));
  await addGroups(['admins', 'family', 'staff'], person.id);
  await addGroups(['media']);
  const configured = await patchApp({
    groupsFilter: ['admins', 'media', 'staff'],
    customClaims: [
      { name: 'app_role', source: { type: 'role' }, inAccessToken: true },
      { name: 'team', source: { type: 'profileField', key: 'team' } },
      { name: 'is_admin', source: { type: 'inGroup', group: 'admins' } },
      {
        name: 'grafana_role', inAccessToken: true,
        source: { type: 'groupMap', map: [{ group: 'admins', value: 'Admin' }, { group: 'staff', value: 'Editor' }], default: 'Viewer' },
      },
      { name: 'tier', source: { type: 'constant', value: { plan: 'gold', seats: 5 } } },
    ],
  });
  expect(configured.status, JSON.stringify(configured.body)).toBe(200);
});

afterAll(async () => {
  await server?.stop();
});

describe('claims in the ID token, userinfo and the access token', () => {
  it('carries the standard claims per scope, groups kept to the filter and sorted, and every custom claim; userinfo says the same', async () => {
    const { config, tokens, id, access } = await signIn();
    const person = (await one(db().select().from(people).where(eq(people.id, ada.id))))!;
    const expected = {
      sub: ada.id,
      name: 'Ada Lovelace', given_name: 'Ada', family_name: 'Lovelace', preferred_username: 'ada',
      updated_at: Math.floor(person.updatedAt.getTime() / 1000),
      email: 'ada@example.com', email_verified: false,
      groups: ['admins', 'staff'],
      app_role: 'member', team: 'analytics', is_admin: true, grafana_role: 'Admin', tier: { plan: 'gold', seats: 5 },
    };
    expect(personPart(id)).toEqual(expected);
    expect(await client.fetchUserInfo(config, tokens.access_token, ada.id)).toEqual(expected);
    // The access token: its own claims plus the two marked inAccessToken, nothing else about the person.
    expect(Object.keys(access).sort()).toEqual(['app_role', 'app_user', 'aud', 'azp', 'client_id', 'exp', 'grafana_role', 'iat', 'iss', 'jti', 'scope', 'sid', 'sub']);
    expect(access).toMatchObject({ app_role: 'member', grafana_role: 'Admin', scope: FULL });
  });

  it('without the scopes, only sub and the custom claims (which come whatever the scope)', async () => {
    const { id, config, tokens } = await signIn('openid');
    const custom = { app_role: 'member', team: 'analytics', is_admin: true, grafana_role: 'Admin', tier: { plan: 'gold', seats: 5 } };
    expect(personPart(id)).toEqual({ sub: ada.id, ...custom });
    expect(await client.fetchUserInfo(config, tokens.access_token, ada.id)).toEqual({ sub: ada.id, ...custom });
  });

  it('a refresh computes the access token claims again; userinfo reads the current ones', async () => {
    const { config, tokens } = await signIn();
    await exec(db().update(memberships).set({ role: 'admin' }).where(eq(memberships.id, ada.membershipId)));
    await exec(db().delete(groupMembers).where(and(eq(groupMembers.personId, ada.id), eq(groupMembers.groupId, 'admins'))));
    try {
      const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
      expect(decodeJwt(refreshed.access_token)).toMatchObject({ app_role: 'admin', grafana_role: 'Editor' });
      const info = await client.fetchUserInfo(config, refreshed.access_token, ada.id);
      expect(info).toMatchObject({ groups: ['staff'], is_admin: false, grafana_role: 'Editor', app_role: 'admin' });
    } finally {
      await exec(db().update(memberships).set({ role: 'member' }).where(eq(memberships.id, ada.membershipId)));
      await addGroups(['admins'], ada.id);
    }
  });
});

describe('the ID token stays under 8 KB', () => {
  async function withGroupCount(count: number, idLength: number) {
    const ids = Array.from({ length: count }, (_, i) => `g${String(i).padStart(3, '0')}`.padEnd(idLength, 'x'));
    await addGroups(ids, ada.id);
    return ids;
  }
  async function dropGroups(ids: string[]) {
    for (const id of ids) await exec(db().delete(groups).where(eq(groups.id, id)));
  }

  it('past 150 groups: groups leaves the ID token (groups_truncated), stays whole in userinfo', async () => {
    await patchApp({ groupsFilter: null });
    const ids = await withGroupCount(148, 8); // with admins, family, staff: 151
    try {
      const { tokens, id, config } = await signIn();
      expect(tokens.id_token!.length).toBeLessThan(8192);
      expect(id.groups).toBeUndefined();
      expect(id.groups_truncated).toBe(true);
      const info = await client.fetchUserInfo(config, tokens.access_token, ada.id);
      expect(info.groups).toHaveLength(151);
      expect(info.groups).toEqual([...ids, 'admins', 'family', 'staff'].sort());
      expect(info.groups_truncated).toBeUndefined();
      // 150 exactly still fit.
      await exec(db().delete(groups).where(eq(groups.id, ids[0]!)));
      const at150 = await signIn();
      expect(at150.id.groups).toHaveLength(150);
      expect(at150.id.groups_truncated).toBeUndefined();
      expect(at150.tokens.id_token!.length).toBeLessThan(8192);
    } finally {
      await dropGroups(ids);
      await patchApp({ groupsFilter: ['admins', 'media', 'staff'] });
    }
  });

  it('fewer but long group ids that would pass 8 KB are left out the same way', async () => {
    await patchApp({ groupsFilter: null });
    const ids = await withGroupCount(120, 64);
    try {
      const { tokens, id } = await signIn();
      expect(id.groups).toBeUndefined();
      expect(id.groups_truncated).toBe(true);
      expect(tokens.id_token!.length).toBeLessThan(8192);
    } finally {
      await dropGroups(ids);
      await patchApp({ groupsFilter: ['admins', 'media', 'staff'] });
    }
  });
});

describe('what claims name may go away without failing a sign-in', () => {
  it('a deleted group: inGroup false, groupMap skips it; a removed profile field: its claim left out', async () => {
    await addGroups(['doomed']);
    expect((await patchApp({
      customClaims: [
        { name: 'in_doomed', source: { type: 'inGroup', group: 'doomed' } },
        { name: 'mapped', source: { type: 'groupMap', map: [{ group: 'doomed', value: 'D' }, { group: 'staff', value: 'S' }] } },
        { name: 'desk', source: { type: 'profileField', key: 'desk' } },
      ],
    })).status).toBe(200);
    await exec(db().insert(groupMembers).values({ groupId: 'doomed', personId: ada.id, addedAt: new Date() }));
    expect(personPart((await signIn('openid')).id)).toEqual({ sub: ada.id, in_doomed: true, mapped: 'D', desk: 12 });

    await exec(db().delete(groups).where(eq(groups.id, 'doomed')));
    const policy = await server.admin('PATCH', '/api/admin/applications/wiki/auth-policy', { profile_fields: [{ key: 'team', label: 'Team', type: 'string' }] });
    expect(policy.status).toBe(200);
    const after = await signIn('openid groups');
    expect(personPart(after.id)).toEqual({ sub: ada.id, groups: ['admins', 'staff'], in_doomed: false, mapped: 'S' });
    expect(await client.fetchUserInfo(after.config, after.tokens.access_token, ada.id)).toEqual(personPart(after.id));
    // The settings still name them (shown as they are); a new save must drop them.
    expect((await server.admin('GET', '/api/admin/applications/wiki').then((r) => r.json())).customClaims).toHaveLength(3);
    await server.admin('PATCH', '/api/admin/applications/wiki/auth-policy', {
      profile_fields: [{ key: 'team', label: 'Team', type: 'string' }, { key: 'desk', label: 'Desk', type: 'integer' }],
    });
  });
});

describe('unknownScopes through openid-client', () => {
  it('reject answers invalid_scope at authorize; ignore grants what is known and says so in scope', async () => {
    const config = await wiki();
    const asked = client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid profile roles', state: 's' });
    const refused = await follow(asked, cookie);
    expect(refused.location!.searchParams.get('error')).toBe('invalid_scope');
    await expect(client.authorizationCodeGrant(config, refused.location!, { expectedState: 's' })).rejects.toMatchObject({ error: 'invalid_scope' });

    await patchApp({ unknownScopes: 'ignore' });
    try {
      const hop = await follow(client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid profile roles address', state: 't' }), cookie);
      const tokens = await client.authorizationCodeGrant(config, hop.location!, { expectedState: 't' });
      expect(tokens.scope).toBe('openid profile address');
    } finally {
      await patchApp({ unknownScopes: 'reject' });
    }
  });
});

describe('the admin API', () => {
  it('refuses reserved and duplicate names, sources missing what they need, unknown groups and profile keys, naming each field', async () => {
    const res = await patchApp({
      customClaims: [
        { name: 'groups', source: { type: 'role' } },
        { name: 'email', source: { type: 'constant', value: 1 } },
        { name: 'x', source: { type: 'profileField' } },
        { name: 'x', source: { type: 'profileField', key: 'nope' } },
        { name: 'y', source: { type: 'inGroup', group: 'ghosts' } },
        { name: 'z', source: { type: 'groupMap', map: [{ group: 'admins', value: 1 }, { group: 'ghosts', value: 2 }], value: 3 } },
      ],
      groupsFilter: ['admins', 'ghosts'],
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors).toEqual([
      { path: 'body.customClaims.0.name', message: '"groups" is a registered claim name that Gatehouse sets itself; choose another name' },
      { path: 'body.customClaims.1.name', message: '"email" is a registered claim name that Gatehouse sets itself; choose another name' },
      { path: 'body.customClaims.2.source.key', message: 'is required for a profileField source' },
      { path: 'body.customClaims.3.name', message: 'duplicate claim name "x"' },
      { path: 'body.customClaims.3.source.key', message: '"nope" is not a profile field of this application' },
      { path: 'body.customClaims.5.source.value', message: 'is not a field of a groupMap source' },
      { path: 'body.customClaims.4.source.group', message: 'there is no group "ghosts"' },
      { path: 'body.customClaims.5.source.map.1.group', message: 'there is no group "ghosts"' },
      { path: 'body.groupsFilter.1', message: 'there is no group "ghosts"' },
    ]);
    const many21 = await patchApp({ customClaims: Array.from({ length: 21 }, (_, i) => ({ name: `c${i}`, source: { type: 'role' } })) });
    expect(many21.status).toBe(400);
    expect(many21.body.errors[0].path).toBe('body.customClaims');
    const big = await patchApp({ customClaims: [{ name: 'big', source: { type: 'constant', value: 'x'.repeat(5000) } }] });
    expect(big.body.errors).toEqual([{ path: 'body.customClaims', message: 'must be at most 4096 bytes as JSON (the ID token must stay small)' }]);
    // Nothing was half-written.
    expect((await server.admin('GET', '/api/admin/applications/wiki').then((r) => r.json())).customClaims).toHaveLength(3);
  });

  it("previews a member's claims: the ID token's, userinfo's and the access token's", async () => {
    await patchApp({
      groupsFilter: ['admins', 'media', 'staff'],
      customClaims: [
        { name: 'app_role', source: { type: 'role' }, inAccessToken: true },
        { name: 'grafana_role', source: { type: 'groupMap', map: [{ group: 'admins', value: 'Admin' }], default: 'Viewer' } },
      ],
    });
    const res = await server.admin('GET', `/api/admin/applications/wiki/users/${ada.membershipId}/claims`);
    expect(res.status).toBe(200);
    const preview = await res.json();
    const { id } = await signIn('openid profile email groups');
    expect(preview.scope).toBe('openid profile email groups');
    expect(preview.idToken).toEqual(personPart(id));
    expect(preview.userinfo).toEqual(personPart(id));
    expect(preview.accessToken).toEqual({ app_role: 'member' });
    const narrow = await (await server.admin('GET', `/api/admin/applications/wiki/users/${ada.membershipId}/claims?scope=openid`)).json();
    expect(narrow.idToken).toEqual({ sub: ada.id, app_role: 'member', grafana_role: 'Admin' });
    const bad = await server.admin('GET', `/api/admin/applications/wiki/users/${ada.membershipId}/claims?scope=openid%20roles`);
    expect(bad.status).toBe(400);
    expect((await bad.json()).errors).toEqual([{ path: 'query.scope', message: 'Unsupported scope: roles.' }]);
    expect((await server.admin('GET', '/api/admin/applications/wiki/users/mem_nope/claims')).status).toBe(404);
  });

  it('discovery lists the scopes, every standard claim and both response modes', async () => {
    const meta = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Record<string, string[]>;
    expect(meta.scopes_supported).toEqual(['openid', 'profile', 'email', 'groups', 'address', 'phone', 'offline_access']);
    for (const claim of ['name', 'given_name', 'family_name', 'preferred_username', 'updated_at', 'email', 'email_verified', 'groups']) {
      expect(meta.claims_supported).toContain(claim);
    }
    expect(meta.response_modes_supported).toEqual(['query', 'form_post']);
  });
});

describe('the Grafana example (docs/integrations/grafana.md)', () => {
  const page = readFileSync(new URL('../../docs/integrations/grafana.md', import.meta.url), 'utf8');
  const rolePath = /^role_attribute_path = (contains.*)$/m.exec(page)![1]!;

  it("role_attribute_path over the groups claim gives each member the documented role", async () => {
    await addGroups(['grafana-admins', 'grafana-editors']);
    const created = await createClient(server, {
      id: 'grafana', name: 'Grafana', audience: 'https://grafana.example.lan', clientType: 'web', redirectUris: [REDIRECT],
      groupsFilter: ['grafana-admins', 'grafana-editors'],
    });
    const config = await client.discovery(new URL(server.url), 'grafana', undefined, client.ClientSecretBasic(created.clientSecret!), {
      execute: [client.allowInsecureRequests],
    });
    // Grafana is a realm of its own: Ada signs in to it (open sign-up makes her a member).
    const grafanaCookie = await signInCookie(server, 'ada@example.com', 'grafana');
    const roleOf = async () => {
      const hop = await follow(client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid profile email groups', state: 'g' }), grafanaCookie);
      const claims = (await client.authorizationCodeGrant(config, hop.location!, { expectedState: 'g' })).claims()!;
      return { role: jmespath.search(claims, rolePath) as string, groups: claims.groups };
    };
    expect(await roleOf()).toEqual({ role: 'Viewer', groups: [] });
    await exec(db().insert(groupMembers).values({ groupId: 'grafana-editors', personId: ada.id, addedAt: new Date() }));
    expect(await roleOf()).toEqual({ role: 'Editor', groups: ['grafana-editors'] });
    await exec(db().insert(groupMembers).values({ groupId: 'grafana-admins', personId: ada.id, addedAt: new Date() }));
    expect(await roleOf()).toEqual({ role: 'Admin', groups: ['grafana-admins', 'grafana-editors'] });
  });

  it('the groupMap claim of section 3b says the same', async () => {
    const claims = JSON.parse(/cat > grafana-claims.json <<'EOF'\n([\s\S]*?)\nEOF/.exec(page)![1]!) as unknown[];
    expect((await patchApp({ customClaims: claims }, 'grafana')).status).toBe(200);
    // Ada joined Grafana when she signed in to it; she is in both groups: the first listed wins.
    const member = (await one(db().select().from(memberships).where(and(eq(memberships.personId, ada.id), eq(memberships.applicationId, 'grafana')))))!;
    const preview = await (await server.admin('GET', `/api/admin/applications/grafana/users/${member.id}/claims?scope=openid`)).json();
    expect(jmespath.search(preview.idToken, 'grafana_role')).toBe('Admin');
    await exec(db().delete(groupMembers).where(and(eq(groupMembers.personId, ada.id), eq(groupMembers.groupId, 'grafana-admins'))));
    const editor = await (await server.admin('GET', `/api/admin/applications/grafana/users/${member.id}/claims?scope=openid`)).json();
    expect(editor.idToken.grafana_role).toBe('Editor');
  });
});

