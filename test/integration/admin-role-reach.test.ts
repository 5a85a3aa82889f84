/**
 * How far an administrator's role reaches over other administrators (issue 49, H3 and H5; spec
 * administrators-and-people.md): owners are members of every application, so an application's
 * second-factor reset reaches them. A second-factor reset, signing out everywhere, and changing
 * or deleting a person are refused with 403 `forbidden` when the person's role ranks above the
 * caller's (owner > people manager > app manager); equal or lower ranks, and the admin token,
 * go through. Every call is made over HTTP with a panel token got through the real sign-in.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from '../helpers/app.js';
import { administrator, asBearer, multiFactorSession, panelSignIn, personWithTotp, type TestAdministrator } from '../helpers/admins.js';
import { addMember } from '../helpers/members.js';
import { expectProblem } from '../helpers/problem.js';

let t: TestApp;
let olive: TestAdministrator; // owner
let oscar: TestAdministrator; // owner
let pat: TestAdministrator; // people manager
let pia: TestAdministrator; // people manager
let amy: TestAdministrator; // app manager of alpha
let pete: TestAdministrator; // no role
const bearer: Record<'oscar' | 'pat' | 'amy', string> = { oscar: '', pat: '', amy: '' };

beforeAll(async () => {
  t = await makeApp({ perFile: true, config: { env: { GATEHOUSE_SIGN_UP_RATE_LIMIT: '100' } } });
  olive = await administrator(t, 'olive@example.com', 'owner');
  oscar = await administrator(t, 'oscar@example.com', 'owner');
  pat = await administrator(t, 'pat@example.com', 'people_manager');
  pia = await administrator(t, 'pia@example.com', 'people_manager');
  // Created after the owners: they become its members (administrators/…, "First run").
  const created = await t.admin('POST', '/api/admin/applications', {
    id: 'alpha', name: 'Alpha', audience: 'https://alpha.example.com/api', redirectUris: ['https://alpha.example.com/cb'], clientType: 'web',
  });
  expect(created.statusCode, created.body).toBe(201);
  amy = await administrator(t, 'amy@example.com', 'app_manager', ['alpha']);
  pete = await personWithTotp(t, 'pete@example.com');
  for (const who of [pat, pia, pete]) await addMember(t, 'alpha', who.email);
  bearer.oscar = (await panelSignIn(t, oscar)).access_token;
  bearer.pat = (await panelSignIn(t, pat)).access_token;
  bearer.amy = (await panelSignIn(t, amy)).access_token;
});

/** The member id of `who` in alpha. */
async function memberId(who: TestAdministrator): Promise<string> {
  const res = await t.admin('GET', `/api/admin/applications/alpha/users?q=${encodeURIComponent(who.email)}`);
  expect(res.statusCode, res.body).toBe(200);
  const [member] = res.json().users as { id: string; email: string }[];
  expect(member?.email).toBe(who.email);
  return member!.id;
}

const resetFactors = async (caller: keyof typeof bearer, who: TestAdministrator) =>
  asBearer(t, bearer[caller], 'DELETE', `/api/admin/applications/alpha/users/${await memberId(who)}/second-factor`);
const signOutEverywhere = (caller: keyof typeof bearer, who: TestAdministrator) => asBearer(t, bearer[caller], 'POST', `/api/admin/people/${who.personId}/sign-out`);

/** What an administrator's refusal says, exactly. */
function refused(res: Awaited<ReturnType<typeof asBearer>>, detail: string) {
  const body = expectProblem(res, 403, 'forbidden');
  expect(body.detail).toBe(detail);
}

/** Whether `who` still has their TOTP, and how many live sessions (as the admin token reads them). */
async function stateOf(who: TestAdministrator) {
  const member = await t.admin('GET', `/api/admin/applications/alpha/users/${await memberId(who)}`);
  const sessions = await t.admin('GET', `/api/admin/people/${who.personId}/sessions`);
  return { totp: member.json().secondFactor.totp.enabled as boolean, sessions: (sessions.json().sessions as unknown[]).length };
}

describe('second-factor resets and signing out everywhere (H3)', () => {
  it('an app manager may not reset the factors of an owner or a people manager, only of those below', async () => {
    await multiFactorSession(t, olive);
    const before = await stateOf(olive);
    expect(before).toMatchObject({ totp: true });
    expect(before.sessions).toBeGreaterThan(0);
    refused(await resetFactors('amy', olive), "This person is an owner, above your administrator role (app_manager): you may not reset their second factors.");
    refused(await resetFactors('amy', pat), 'This person is a people manager, above your administrator role (app_manager): you may not reset their second factors.');
    expect(await stateOf(olive)).toEqual(before);
    expect((await stateOf(pat)).totp).toBe(true);
    // A member with no role: the reset an app manager is for.
    const reset = await resetFactors('amy', pete);
    expect(reset.statusCode, reset.body).toBe(204);
    expect(await stateOf(pete)).toEqual({ totp: false, sessions: 0 });
  });

  it('a people manager may neither reset an owner\'s factors nor sign the owner out everywhere; an owner may', async () => {
    await multiFactorSession(t, olive);
    const before = await stateOf(olive);
    refused(await resetFactors('pat', olive), 'This person is an owner, above your administrator role (people_manager): you may not reset their second factors.');
    refused(await signOutEverywhere('pat', olive), 'This person is an owner, above your administrator role (people_manager): you may not sign them out everywhere.');
    expect(await stateOf(olive)).toEqual(before);
    // Another people manager is not above a people manager.
    await multiFactorSession(t, pia);
    const signedOut = await signOutEverywhere('pat', pia);
    expect(signedOut.statusCode, signedOut.body).toBe(200);
    expect(signedOut.json().sessionsEnded).toBeGreaterThan(0);
    // The other owner may do both.
    const ended = await signOutEverywhere('oscar', olive);
    expect(ended.statusCode, ended.body).toBe(200);
    expect(ended.json()).toEqual({ sessionsEnded: before.sessions });
    const reset = await resetFactors('oscar', olive);
    expect(reset.statusCode, reset.body).toBe(204);
    expect(await stateOf(olive)).toEqual({ totp: false, sessions: 0 });
  });
});

describe('a password-reset link (issue 44, m6)', () => {
  it("is made only for people at or below the caller's role, and not by an app manager", async () => {
    const linkFor = (caller: keyof typeof bearer, who: TestAdministrator) => asBearer(t, bearer[caller], 'POST', `/api/admin/people/${who.personId}/password-reset-link`);
    refused(await linkFor('pat', olive), 'This person is an owner, above your administrator role (people_manager): you may not make a password-reset link for them.');
    expectProblem(await linkFor('amy', pete), 403, 'forbidden');
    const made = await linkFor('pat', pia);
    expect(made.statusCode, made.body).toBe(201);
    expect(Object.keys(made.json()).sort()).toEqual(['expiresAt', 'url']);
    expect((await linkFor('oscar', olive)).statusCode).toBe(201);
  });
});

describe('changing an owner (H5)', () => {
  it('only an owner or the admin token may disable, change or delete an owner, even while another owner exists', async () => {
    const olivePath = `/api/admin/people/${olive.personId}`;
    refused(await asBearer(t, bearer.pat, 'PATCH', olivePath, { status: 'disabled' }), 'This person is an owner, above your administrator role (people_manager): you may not change them.');
    refused(await asBearer(t, bearer.pat, 'PATCH', olivePath, { name: 'Not Olive' }), 'This person is an owner, above your administrator role (people_manager): you may not change them.');
    refused(await asBearer(t, bearer.pat, 'DELETE', olivePath), 'This person is an owner, above your administrator role (people_manager): you may not delete them.');
    const still = await t.admin('GET', olivePath);
    expect(still.json()).toMatchObject({ status: 'active', name: 'olive' });
    // A people manager still manages people without a role above theirs.
    const peteDisabled = await asBearer(t, bearer.pat, 'PATCH', `/api/admin/people/${pete.personId}`, { status: 'disabled' });
    expect(peteDisabled.statusCode, peteDisabled.body).toBe(200);
    expect(peteDisabled.json().status).toBe('disabled');
    // An owner changes another owner; the admin token too.
    const disabled = await asBearer(t, bearer.oscar, 'PATCH', olivePath, { status: 'disabled' });
    expect(disabled.statusCode, disabled.body).toBe(200);
    expect(disabled.json().status).toBe('disabled');
    const enabled = await t.admin('PATCH', olivePath, { status: 'active' });
    expect(enabled.statusCode, enabled.body).toBe(200);
    expect(enabled.json().status).toBe('active');
    const deleted = await asBearer(t, bearer.oscar, 'DELETE', olivePath);
    expect(deleted.statusCode, deleted.body).toBe(204);
    expect((await t.admin('GET', olivePath)).statusCode).toBe(404);
  });
});
