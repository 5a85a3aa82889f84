/**
 * The claims' reads on either engine (this file also runs on PostgreSQL, project unit-postgres):
 * a code exchange, a refresh, userinfo and the admin preview, with groups kept to the filter,
 * every custom claim and the access token's, after a change to the member between them.
 */
import { describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { makeApp, type TestApp } from '../helpers/app.js';
import { setUpClients, spaTokens, token } from '../helpers/oauth-inject.js';
import { groupMembers, groups, memberships, people } from '../../server/db/schema.js';
import { engineOf, exec, one } from '../../server/db/store.js';
import { groupIdsAmongListed, GROUP_IDS_AMONG_PG, GROUP_IDS_AMONG_SQL, GROUP_IDS_OF_PERSON_SQL, MEMBER_CLAIMS_SQL } from '../../server/oauth/claims/queries.js';
import { queryPlan, usesPostgresIndex } from '../helpers/query-plan.js';

async function addGroups(t: TestApp, ids: string[], personId: string) {
  const now = t.clock.now();
  for (const id of ids) {
    await exec(t.db.insert(groups).values({ id, name: id, createdAt: now, updatedAt: now }));
    await exec(t.db.insert(groupMembers).values({ groupId: id, personId, addedAt: now }));
  }
}

const userinfo = (t: TestApp, accessToken: string) =>
  t.app.inject({ method: 'GET', url: '/api/auth/oauth2/userinfo', headers: { authorization: `Bearer ${accessToken}` } });

describe('claims on this engine', () => {
  it('exchange, refresh, userinfo and preview read groups, role and profile as they are', async () => {
    const t = await makeApp();
    const { cookie } = await setUpClients(t);
    const person = (await one(t.db.select().from(people).where(eq(people.email, 'ada@example.com'))))!;
    const member = (await one(t.db.select().from(memberships).where(eq(memberships.personId, person.id))))!;
    // Sorted in byte order on either engine, whatever PostgreSQL's collation does with '-', '.' and '_'.
    await addGroups(t, ['ops', 'a-team', 'a.team', 'a_team', 'family'], person.id);
    await exec(t.db.update(memberships).set({ profile: { team: 'blue' } }).where(eq(memberships.id, member.id)));
    await exec(t.db.update(people).set({ givenName: 'Ada', familyName: 'Lovelace' }).where(eq(people.id, person.id)));
    const patched = await t.admin('PATCH', '/api/admin/applications/notes', {
      authPolicy: { profile_fields: [{ key: 'team', label: 'Team', type: 'string' }] },
      groupsFilter: ['a-team', 'a.team', 'a_team', 'ops'],
      customClaims: [
        { name: 'role', source: { type: 'role' }, inAccessToken: true },
        { name: 'team', source: { type: 'profileField', key: 'team' }, inAccessToken: true },
        { name: 'on_call', source: { type: 'inGroup', group: 'ops' }, inAccessToken: true },
      ],
    });
    expect(patched.statusCode, patched.body).toBe(200);

    const tokens = await spaTokens(t, cookie, { scope: 'openid profile groups offline_access' });
    const id = decodeJwt(tokens.id_token!);
    expect(id).toMatchObject({
      given_name: 'Ada', family_name: 'Lovelace', preferred_username: 'ada',
      groups: ['a-team', 'a.team', 'a_team', 'ops'], role: 'member', team: 'blue', on_call: true,
    });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ role: 'member', team: 'blue', on_call: true });
    const info = await userinfo(t, tokens.access_token);
    expect(info.statusCode).toBe(200);
    expect(info.json()).toEqual({
      sub: person.id, name: 'Ada', given_name: 'Ada', family_name: 'Lovelace', preferred_username: 'ada',
      updated_at: Math.floor(person.updatedAt.getTime() / 1000), groups: ['a-team', 'a.team', 'a_team', 'ops'], role: 'member', team: 'blue', on_call: true,
    });

    await exec(t.db.update(memberships).set({ role: 'admin', profile: { team: 'red' } }).where(eq(memberships.id, member.id)));
    await exec(t.db.delete(groupMembers).where(and(eq(groupMembers.personId, person.id), eq(groupMembers.groupId, 'ops'))));
    const refreshed = await token(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: 'notes' });
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    expect(decodeJwt(refreshed.json().access_token)).toMatchObject({ role: 'admin', team: 'red', on_call: false });
    expect((await userinfo(t, refreshed.json().access_token)).json()).toMatchObject({ groups: ['a-team', 'a.team', 'a_team'], role: 'admin', team: 'red', on_call: false });

    const preview = await t.admin('GET', `/api/admin/applications/notes/users/${member.id}/claims?scope=openid%20groups`);
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.json()).toEqual({
      scope: 'openid groups',
      idToken: { sub: person.id, groups: ['a-team', 'a.team', 'a_team'], role: 'admin', team: 'red', on_call: false },
      userinfo: { sub: person.id, groups: ['a-team', 'a.team', 'a_team'], role: 'admin', team: 'red', on_call: false },
      accessToken: { role: 'admin', team: 'red', on_call: false },
    });
  });

  it("reads a person's groups from the covering (person_id, group_id) index, in order, and the member by its key", async () => {
    const t = await makeApp();
    const groupsPlan = await queryPlan(t.db, GROUP_IDS_OF_PERSON_SQL, 'usr_x');
    const memberPlan = await queryPlan(t.db, MEMBER_CLAIMS_SQL, 'mem_x');
    const existingPlan = await queryPlan(t.db, 'SELECT id FROM groups WHERE id IN (?, ?)', 'a', 'b');
    if (engineOf(t.db) === 'sqlite') {
      // One probe of the covering index per group a claim names; json_each reads only the parameter.
      expect(await queryPlan(t.db, groupIdsAmongListed(3), 'usr_x', 'a', 'b', 'c')).toBe('SEARCH group_members USING COVERING INDEX group_members_person_idx (person_id=? AND group_id=?)');
      expect(await queryPlan(t.db, GROUP_IDS_AMONG_SQL, 'usr_x', '["a","b"]')).toBe('SEARCH group_members USING COVERING INDEX group_members_person_idx (person_id=? AND group_id=?) | LIST SUBQUERY 1 | SCAN json_each VIRTUAL TABLE INDEX 1:');
      expect(groupsPlan).toBe('SEARCH group_members USING COVERING INDEX group_members_person_idx (person_id=?)');
      expect(memberPlan).toBe('SEARCH memberships USING INDEX sqlite_autoindex_memberships_1 (id=?)');
      expect(existingPlan).toBe('SEARCH groups USING COVERING INDEX sqlite_autoindex_groups_1 (id=?)');
    } else {
      expect(usesPostgresIndex(groupsPlan, 'group_members_person_idx'), groupsPlan).toBe(true);
      expect(usesPostgresIndex(memberPlan, 'memberships_pkey'), memberPlan).toBe(true);
      expect(usesPostgresIndex(existingPlan, 'groups_pkey'), existingPlan).toBe(true);
      const among = await queryPlan(t.db, GROUP_IDS_AMONG_PG.replace(/\$\d/g, '?'), 'usr_x', '{a,b}');
      expect(usesPostgresIndex(among, 'group_members_person_idx'), among).toBe(true);
    }
  });
});

describe('groups named by claim settings', () => {
  it('refuses to delete a group a groupsFilter or a custom claim names (409 group_in_use naming both), and lets it go once they do not', async () => {
    const t = await makeApp();
    await setUpClients(t);
    for (const id of ['admins', 'staff']) expect((await t.admin('POST', '/api/admin/groups', { id, name: id })).statusCode).toBe(201);
    await t.admin('PATCH', '/api/admin/applications/notes', { groupsFilter: ['admins'] });
    await t.admin('PATCH', '/api/admin/applications/billing', {
      customClaims: [{ name: 'level', source: { type: 'groupMap', map: [{ group: 'staff', value: 1 }, { group: 'admins', value: 2 }] } }],
    });
    const refused = await t.admin('DELETE', '/api/admin/groups/admins');
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({
      code: 'group_in_use',
      // Applications in creation order (both made at the same instant here: then by id).
      detail: 'The group "admins" is named by Billing (customClaims), Notes (groupsFilter); remove it there first.',
      errors: [
        { path: 'applications.billing.customClaims', message: 'names the group "admins"' },
        { path: 'applications.notes.groupsFilter', message: 'names the group "admins"' },
      ],
    });
    await t.admin('PATCH', '/api/admin/applications/notes', { groupsFilter: null });
    await t.admin('PATCH', '/api/admin/applications/billing', { customClaims: [] });
    expect((await t.admin('DELETE', '/api/admin/groups/admins')).statusCode).toBe(204);
  });
});
