/**
 * App presets (spec presets-and-operations.md, "App presets"; issue 37): the catalogue API,
 * creating an application from a preset with its inputs checked by name, the set-up text with
 * secrets only as placeholders and CA notes with LAN TLS on, later preset versions offered and
 * never forced, and Test sign-in answering the preset's own checks. One app per file where the
 * tests do not disturb each other; each case names what it proves.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../server/config.js';
import { ensureLocalTls } from '../../server/ops/tls.js';
import { eq } from 'drizzle-orm';
import { makeApp, type TestApp } from '../helpers/app.js';
import { expectProblem, expectValidation } from '../helpers/problem.js';
import { signIn, signUp, sessionCookieOf } from '../helpers/accounts.js';
import { authorize, location } from '../helpers/oauth-inject.js';
import { pkcePair } from '../helpers/oauth-server.js';
import { applications, auditLog, groups, people } from '../../server/db/schema.js';
import { exec, many, one } from '../../server/db/store.js';
import { PRESETS } from '../../server/presets/catalogue/index.js';
import { PLACEHOLDERS } from '../../server/presets/build.js';
import { authnRequestXml, attributeValues, el, idpCertificates, redirectUrl, responseOf, spKey, spMetadataXml, verifySigned } from '../helpers/saml-sp.js';

const T0 = new Date('2026-06-01T10:00:00.000Z');

/** Every app the contract names, by the preset that covers it. */
const NAMED = [
  'nextcloud', 'gitea', 'forgejo', 'grafana', 'proxmox-ve', 'portainer', 'immich', 'paperless-ngx', 'synapse', 'outline',
  'vaultwarden', 'open-webui', 'headscale', 'audiobookshelf', 'jellyfin-ldap', 'synology-dsm', 'home-assistant', 'uptime-kuma',
  'roundcube', 'dovecot', 'tailscale', 'apache-mod-auth-openidc', 'django-social-auth', 'express-openid-connect', 'authjs', 'oidc-client-ts',
  // spec saml.md: the SAML presets
  'saml-generic', 'nextcloud-saml', 'zammad', 'snipe-it', 'bookstack', 'wikijs', 'aws-iam-identity-center',
];

async function createFrom(t: TestApp, body: Record<string, unknown>) {
  const res = await t.admin('POST', '/api/admin/applications', body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** LAN TLS with a real local CA in a temporary data directory (the set-up text's trust lines need one). */
const caDirs: string[] = [];
afterAll(() => caDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
function withLocalCa(): Partial<Config> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-presets-ca-'));
  caDirs.push(dir);
  ensureLocalTls(dir, [], T0);
  return { dataDir: dir, tls: { mode: 'auto', extraNames: [] } };
}

const count = async (t: TestApp) => (await many(t.db.select({ id: applications.id }).from(applications))).length;

describe('the catalogue', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ clock: T0, perFile: true });
  });

  it('GET /api/admin/presets lists at least 20 presets covering every app the contract names, in the contract\'s shape', async () => {
    const res = await t.admin('GET', '/api/admin/presets');
    expect(res.statusCode).toBe(200);
    const { presets } = res.json() as { presets: { id: string; inputs: { key: string }[]; testedWith: { status: string; test: string | null } }[] };
    expect(presets.length).toBeGreaterThanOrEqual(20);
    expect(presets.map((p) => p.id)).toEqual(expect.arrayContaining(NAMED));
    expect(new Set(presets.map((p) => p.id)).size).toBe(presets.length);
    // The name people see: the app, without how it connects.
    const appNames = Object.fromEntries((presets as unknown as { id: string; appName: string }[]).map((p) => [p.id, p.appName]));
    expect([appNames['jellyfin-ldap'], appNames['home-assistant'], appNames.nextcloud, appNames.grafana]).toEqual(['Jellyfin', 'Home Assistant', 'Nextcloud', 'Grafana']);
    expect(presets.find((p) => p.id === 'grafana')).toEqual({
      id: 'grafana',
      name: 'Grafana',
      appName: 'Grafana',
      category: 'web-app',
      protocol: 'oidc',
      summary: 'Grafana signs people in with generic OAuth and gives them Admin, Editor or Viewer from a claim.',
      version: 1,
      testedWith: { status: 'configuration', product: 'Grafana', version: '10.4', test: 'test/integration/presets.test.ts' },
      inputs: [
        { key: 'baseUrl', label: 'Grafana address (root_url)', example: 'https://grafana.lan.example', kind: 'url', required: true },
        { key: 'adminGroup', label: 'Group whose members are Grafana Admins', example: 'admins', kind: 'group', required: false, hint: 'Optional. Without groups, the application role decides: admin → Admin, member → Viewer.' },
        { key: 'editorGroup', label: 'Group whose members are Grafana Editors', example: 'editors', kind: 'group', required: false, hint: 'Optional: members (not in the admin group) become Editors.' },
      ],
    });
    // Every preset takes a base URL first (Tailscale and Dovecot name a domain or host instead), and says how it was checked.
    for (const preset of presets) {
      if (!['tailscale', 'dovecot'].includes(preset.id)) expect(preset.inputs[0]!.key, preset.id).toBe('baseUrl');
      expect(preset.testedWith.status !== 'documentation', preset.id).toBe(preset.testedWith.test !== null);
    }
  });

  it('every preset names its sources with a version, and its protocol matches what it sets', () => {
    for (const preset of PRESETS) {
      expect(preset.sources.length, preset.id).toBeGreaterThan(0);
      for (const source of preset.sources) {
        expect(source.url, preset.id).toMatch(/^https:\/\//);
        expect(source.version, preset.id).not.toBe('');
      }
      const example = Object.fromEntries(preset.inputs.map((i) => [i.key, i.kind === 'url' ? 'https://app.lan.example' : i.example]));
      const settings = preset.application(example);
      expect(settings.forwardAuth !== null, preset.id).toBe(preset.protocol === 'forward-auth');
      expect(settings.ldap.enabled, preset.id).toBe(preset.protocol === 'ldap');
      expect(settings.saml !== null, preset.id).toBe(preset.protocol === 'saml');
    }
  });

  it('GET /api/admin/presets/:id shows what the preset sets with its inputs as {key}, its client, checks, sources and caveats; 404 for an unknown id', async () => {
    const res = await t.admin('GET', '/api/admin/presets/outline');
    expect(res.statusCode).toBe(200);
    const outline = res.json();
    expect(outline.sets).toEqual({
      clientType: 'web',
      redirectUris: ['{baseUrl}/auth/oidc.callback'],
      postLogoutRedirectUris: ['{baseUrl}/'],
      grantTypes: ['authorization_code', 'refresh_token'],
      backchannelLogoutUri: null,
      ldap: { enabled: false },
      signingAlg: 'RS256',
      unknownScopes: 'reject',
      groupsFilter: null,
      customClaims: [],
      resourceServers: [],
      forwardAuth: null,
      allowedGroups: null,
      radius: null,
      saml: null,
    });
    expect(outline.client).toEqual({ tokenEndpointAuthMethod: 'client_secret_post', pkce: false, scopes: ['openid', 'offline_access', 'profile', 'email'] });
    expect(outline.requirements).toEqual([
      { kind: 'refreshToken', text: 'a refresh token was issued (Outline keeps the session with it)' },
      { kind: 'claim', claim: 'preferred_username', text: 'preferred_username is in the ID token (OIDC_USERNAME_CLAIM)' },
    ]);
    expect(outline.sources[0]).toEqual({ title: 'Outline .env.sample', section: 'Generic OIDC provider (OIDC_CLIENT_ID … OIDC_SCOPES)', url: 'https://github.com/outline/outline/blob/main/.env.sample', version: '1.9.1' });
    expect(outline.caveats[0]).toMatch(/offline_access/);

    const missing = await t.admin('GET', '/api/admin/presets/wordpress');
    expectProblem(missing, 404, 'preset_not_found');
    expect(missing.json().detail).toBe('There is no preset "wordpress".');
  });
});

describe('creating an application from a preset', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ clock: T0, perFile: true });
    const now = t.clock.now();
    await exec(t.db.insert(groups).values({ id: 'admins', name: 'Admins', createdAt: now, updatedAt: now }));
  });

  it('fills the application from the preset and its inputs, records the preset, and shows the client secret once', async () => {
    const body = await createFrom(t, { preset: 'outline', presetInputs: { baseUrl: 'https://wiki.lan.example/' } });
    expect(body).toMatchObject({
      id: 'outline',
      name: 'Outline',
      audience: 'urn:gatehouse:outline',
      redirectUris: ['https://wiki.lan.example/auth/oidc.callback'],
      postLogoutRedirectUris: ['https://wiki.lan.example/'],
      clientType: 'web',
      grantTypes: ['authorization_code', 'refresh_token'],
      backchannelLogoutUri: null,
      preset: { id: 'outline', version: 1 },
    });
    expect(body.clientSecret).toMatch(/^ghs_/);
    const read = await t.admin('GET', '/api/admin/applications/outline');
    expect(read.json().preset).toEqual({ id: 'outline', version: 1 });
    expect(read.json().clientSecret).toBeUndefined();
    const row = await one(t.db.select({ preset: applications.preset }).from(applications).where(eq(applications.id, 'outline')));
    expect(row!.preset).toEqual({
      id: 'outline',
      version: 1,
      inputs: { baseUrl: 'https://wiki.lan.example' },
      applied: {
        clientType: 'web',
        redirectUris: ['https://wiki.lan.example/auth/oidc.callback'],
        postLogoutRedirectUris: ['https://wiki.lan.example/'],
        grantTypes: ['authorization_code', 'refresh_token'],
        backchannelLogoutUri: null,
        ldap: { enabled: false },
        signingAlg: 'RS256',
        unknownScopes: 'reject',
        groupsFilter: null,
        customClaims: [],
        resourceServers: [],
        forwardAuth: null,
        allowedGroups: null,
        radius: null,
        saml: null,
      },
    });
    const audit = await many(t.db.select().from(auditLog).where(eq(auditLog.action, 'application.created')));
    expect(audit.find((a) => a.target === 'outline')!.details).toEqual({ name: 'Outline', clientType: 'web', preset: 'outline', presetVersion: 1 });
  });

  it('takes an id and a name, uses input defaults, and sets back-channel logout and LDAP where the preset does', async () => {
    const nextcloud = await createFrom(t, { preset: 'nextcloud', presetInputs: { baseUrl: 'https://cloud.lan.example' }, id: 'cloud', name: 'Family cloud' });
    expect(nextcloud).toMatchObject({
      id: 'cloud',
      name: 'Family cloud',
      audience: 'urn:gatehouse:cloud',
      redirectUris: ['https://cloud.lan.example/apps/user_oidc/code', 'https://cloud.lan.example/index.php/apps/user_oidc/code'],
      backchannelLogoutUri: 'https://cloud.lan.example/index.php/apps/user_oidc/backchannel-logout/gatehouse',
    });
    const jellyfin = await createFrom(t, { preset: 'jellyfin-ldap', presetInputs: { baseUrl: 'http://192.168.1.20:8096', usersGroup: 'admins' } });
    expect(jellyfin.name).toBe('Jellyfin');
    expect(jellyfin.ldap).toEqual({ enabled: true, bindDn: 'cn=jellyfin-ldap,ou=services,dc=gatehouse' });
    expect(jellyfin.ldapPassword).toMatch(/^ghl_/);
    const taken = await t.admin('POST', '/api/admin/applications', { preset: 'nextcloud', presetInputs: { baseUrl: 'https://cloud2.lan.example' }, id: 'cloud' });
    expectProblem(taken, 409, 'application_exists');
  });

  it('refuses an unknown preset and missing, malformed or unknown inputs with 400 naming each, writing nothing', async () => {
    const before = await count(t);
    const unknown = await t.admin('POST', '/api/admin/applications', { preset: 'wordpress', presetInputs: { baseUrl: 'https://blog.lan.example' } });
    expectValidation(unknown, ['body.preset']);
    expect(unknown.json().errors).toEqual([{ path: 'body.preset', message: 'there is no preset "wordpress" (GET /api/admin/presets lists them)' }]);

    const missing = await t.admin('POST', '/api/admin/applications', { preset: 'grafana', presetInputs: {} });
    expectValidation(missing, ['body.presetInputs.baseUrl']);
    expect(missing.json()).toMatchObject({ detail: 'The inputs of the Grafana preset are not valid.', errors: [{ path: 'body.presetInputs.baseUrl', message: 'is required' }] });

    const cases: [unknown, string][] = [
      ['ftp://grafana.lan.example', 'must be an http(s) URL'],
      ['grafana.lan.example', 'must be an absolute URL, e.g. https://app.lan.example'],
      ['http://grafana.example.com', 'http is allowed only for loopback or private-network hosts; use https'],
      ['https://grafana.lan.example/?x=1', 'must not contain a query or fragment'],
      ['https://user:pw@grafana.lan.example', 'must not contain credentials'],
      [42, 'must be a string'],
    ];
    for (const [baseUrl, message] of cases) {
      const res = await t.admin('POST', '/api/admin/applications', { preset: 'grafana', presetInputs: { baseUrl } });
      expectValidation(res, ['body.presetInputs.baseUrl']);
      expect(res.json().errors, String(baseUrl)).toEqual([{ path: 'body.presetInputs.baseUrl', message }]);
    }

    const many_ = await t.admin('POST', '/api/admin/applications', {
      preset: 'grafana', presetInputs: { baseUrl: 'https://grafana.lan.example', adminGroup: 'nobody', editorGroup: 'Not A Group', colour: 'blue' },
    });
    expect(many_.json().errors).toEqual([
      { path: 'body.presetInputs.colour', message: 'is not an input of the grafana preset' },
      { path: 'body.presetInputs.editorGroup', message: 'must be a group id (lower-case letters, digits, ., - and _)' },
      { path: 'body.presetInputs.adminGroup', message: 'there is no group "nobody"' },
    ]);

    const text = await t.admin('POST', '/api/admin/applications', { preset: 'nextcloud', presetInputs: { baseUrl: 'https://c.lan.example', providerId: 'no spaces' } });
    expect(text.json().errors).toEqual([{ path: 'body.presetInputs.providerId', message: 'letters, digits, - and _ only (at most 64)' }]);

    const app = await t.admin('POST', '/api/admin/applications', { preset: 'roundcube', presetInputs: { baseUrl: 'https://mail.lan.example', imapApplication: 'dovecot' } });
    expect(app.json().errors).toEqual([{ path: 'body.presetInputs.imapApplication', message: 'there is no application "dovecot"' }]);

    // The body is a preset's: the plain fields are not known there, and presetInputs is required.
    const mixed = await t.admin('POST', '/api/admin/applications', { preset: 'grafana', audience: 'https://grafana.lan.example' });
    expect(mixed.json().errors).toEqual([
      { path: 'body.presetInputs', message: 'is required' },
      { path: 'body.audience', message: 'is not a known field' },
    ]);
    // Without `preset`, the plain application's rules apply as before.
    const plain = await t.admin('POST', '/api/admin/applications', {});
    expectValidation(plain, ['body.audience', 'body.id', 'body.name', 'body.redirectUris']);
    expect(await count(t)).toBe(before);
  });

  it('checks that a named application exists and is confidential, then lets it introspect its tokens (resourceServers)', async () => {
    await createFrom(t, { preset: 'dovecot', presetInputs: { host: 'imap.lan.example' } });
    const spa = await createFrom(t, { preset: 'oidc-client-ts', presetInputs: { baseUrl: 'http://127.0.0.1:5173' } });
    expect(spa.clientType).toBe('spa');
    expect(spa.clientSecret).toBeUndefined();
    const notWeb = await t.admin('POST', '/api/admin/applications', { preset: 'roundcube', presetInputs: { baseUrl: 'https://mail.lan.example', imapApplication: 'oidc-client-ts' } });
    expect(notWeb.json().errors).toEqual([{ path: 'body.presetInputs.imapApplication', message: 'the application "oidc-client-ts" is not a confidential (web) client' }]);
    const roundcube = await createFrom(t, { preset: 'roundcube', presetInputs: { baseUrl: 'https://mail.lan.example', imapApplication: 'dovecot' } });
    expect(roundcube.redirectUris).toEqual(['https://mail.lan.example/index.php/login/oauth']);
    expect(roundcube.resourceServers).toEqual(['dovecot']);
  });
});

describe('the set-up text', () => {
  it('gives settings and files with secrets only as placeholders, and CA notes only with LAN TLS on', async () => {
    for (const tls of ['off', 'auto'] as const) {
      const t = await makeApp({ clock: T0, config: { issuer: 'https://id.lan.example', ...(tls === 'auto' ? withLocalCa() : {}) } });
      const created = await createFrom(t, { preset: 'nextcloud', presetInputs: { baseUrl: 'https://cloud.lan.example' } });
      const res = await t.admin('GET', '/api/admin/applications/nextcloud/setup');
      expect(res.statusCode).toBe(200);
      const setup = res.json();
      expect(JSON.stringify(setup)).not.toContain(created.clientSecret);
      expect(setup.settings).toEqual([
        { label: 'Identifier', value: 'gatehouse' },
        { label: 'Issuer', value: 'https://id.lan.example' },
        { label: 'Discovery URL', value: 'https://id.lan.example/.well-known/openid-configuration' },
        { label: 'Client ID', value: 'nextcloud' },
        { label: 'Client secret', value: PLACEHOLDERS.clientSecret },
        { label: 'Scope', value: 'openid email profile groups' },
        { label: 'User ID mapping', value: 'preferred_username' },
        { label: 'Use unique user ID', value: 'off' },
        { label: 'Groups mapping', value: 'groups (with group provisioning on)' },
      ]);
      expect(setup.files).toEqual([{
        name: 'occ-user-oidc.sh',
        content: [
          'sudo -u www-data php occ user_oidc:provider gatehouse \\',
          "  --clientid='nextcloud' --clientsecret='<client-secret>' \\",
          "  --discoveryuri='https://id.lan.example/.well-known/openid-configuration' \\",
          "  --scope='openid email profile groups' \\",
          '  --unique-uid=0 --mapping-uid=preferred_username --mapping-display-name=name --mapping-email=email \\',
          '  --group-provisioning=1 --mapping-groups=groups \\',
          "  --send-id-token-hint=1 --postlogouturi='https://cloud.lan.example/'",
          '',
        ].join('\n'),
      }]);
      const caNote = setup.notes.find((n: string) => n.startsWith('LAN TLS is on'));
      if (tls === 'off') expect(caNote).toBeUndefined();
      else {
        expect(caNote).toContain('https://id.lan.example/trust/gatehouse-ca.pem');
        expect(caNote).toContain('run occ security:certificates:import /etc/ssl/certs/gatehouse-ca.pem');
        expect(caNote).toContain('set allow_local_remote_servers = true in config.php');
      }
    }
  });

  it('names each runtime\'s own CA mechanism (NODE_EXTRA_CA_CERTS, REQUESTS_CA_BUNDLE, SSL_CERT_FILE, OIDCCABundlePath)', async () => {
    const t = await makeApp({ clock: T0, config: { issuer: 'https://id.lan.example', ...withLocalCa() } });
    const expected: [string, Record<string, string>, string][] = [
      ['outline', { baseUrl: 'https://wiki.lan.example' }, 'NODE_EXTRA_CA_CERTS=/etc/ssl/certs/gatehouse-ca.pem'],
      ['paperless-ngx', { baseUrl: 'https://paperless.lan.example' }, 'REQUESTS_CA_BUNDLE=/etc/ssl/certs/gatehouse-ca.pem SSL_CERT_FILE=/etc/ssl/certs/gatehouse-ca.pem'],
      ['synapse', { baseUrl: 'https://matrix.lan.example' }, 'SSL_CERT_FILE=/path/to/gatehouse-ca.pem'],
      ['apache-mod-auth-openidc', { baseUrl: 'https://intranet.lan.example' }, 'OIDCCABundlePath'],
    ];
    for (const [preset, presetInputs, mechanism] of expected) {
      await createFrom(t, { preset, presetInputs });
      const setup = (await t.admin('GET', `/api/admin/applications/${preset}/setup`)).json();
      expect(setup.notes.filter((n: string) => n.includes('LAN TLS is on')).join(' '), preset).toContain(mechanism);
    }
    const apache = (await t.admin('GET', '/api/admin/applications/apache-mod-auth-openidc/setup')).json();
    expect(apache.files[0].content).toContain('OIDCCABundlePath /etc/ssl/certs/gatehouse-ca.pem');
  });

  it('gives an application made without a preset the generic OpenID Connect settings, and 404s an unknown application', async () => {
    const t = await makeApp({ clock: T0 });
    await t.admin('POST', '/api/admin/applications', { id: 'notes', name: 'Notes', audience: 'https://notes.lan.example/api', redirectUris: ['https://notes.lan.example/cb'] });
    const setup = (await t.admin('GET', '/api/admin/applications/notes/setup')).json();
    expect(setup.settings).toEqual([
      { label: 'Issuer', value: 'http://127.0.0.1:8787' },
      { label: 'Discovery URL', value: 'http://127.0.0.1:8787/.well-known/openid-configuration' },
      { label: 'Client ID', value: 'notes' },
      { label: 'Client secret', value: '<client-secret>' },
      { label: 'Redirect URI', value: 'https://notes.lan.example/cb' },
      { label: 'Scopes', value: 'openid profile email' },
      { label: 'Audience (resource)', value: 'https://notes.lan.example/api' },
    ]);
    expect(setup.files).toEqual([]);
    expectProblem(await t.admin('GET', '/api/admin/applications/nope/setup'), 404, 'application_not_found');
    expectProblem(await t.admin('GET', '/api/admin/applications/notes/preset'), 404, 'not_from_preset');
  });
});

describe('the forward-auth presets', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ clock: T0, perFile: true, config: { issuer: 'https://id.lan.example' } });
    const now = t.clock.now();
    await exec(t.db.insert(groups).values({ id: 'household', name: 'Household', createdAt: now, updatedAt: now }));
  });

  it('protect the base URL\'s host for the allowed group, and the set-up text carries the proxy configurations for the upstream', async () => {
    const ha = await createFrom(t, { preset: 'home-assistant', presetInputs: { baseUrl: 'https://home.lan.example', upstream: 'http://homeassistant:8123', allowedGroup: 'household' } });
    expect(ha).toMatchObject({ id: 'home-assistant', clientType: 'web', forwardAuth: { hosts: ['home.lan.example'], basic: false }, allowedGroups: ['household'], preset: { id: 'home-assistant', version: 2 } });
    const setup = (await t.admin('GET', '/api/admin/applications/home-assistant/setup')).json();
    expect(setup.settings).toEqual([{ label: 'Protected host', value: 'home.lan.example' }, { label: 'Upstream', value: 'http://homeassistant:8123' }]);
    expect(setup.files.map((f: { name: string }) => f.name)).toEqual(['Caddyfile', 'nginx.conf', 'traefik.yml', 'configuration.yaml']);
    // People see the app's name, not how it is connected; administrators pick the preset by both.
    expect(ha.name).toBe('Home Assistant');
    // The very text Connect › Forward auth prints: with nothing asked, for the preset's upstream and scheme.
    for (const [name, proxy] of [['Caddyfile', 'caddy'], ['nginx.conf', 'nginx'], ['traefik.yml', 'traefik']] as const) {
      const printed = (await t.admin('GET', `/api/admin/applications/home-assistant/forward-auth/snippet?proxy=${proxy}`)).json();
      expect([printed.upstream, printed.scheme], name).toEqual(['http://homeassistant:8123', 'https']);
      expect(setup.files.find((f: { name: string }) => f.name === name).content, name).toBe(printed.snippet);
    }
    // What is asked for wins over the preset's.
    const asked = (await t.admin('GET', '/api/admin/applications/home-assistant/forward-auth/snippet?proxy=caddy&upstream=http://10.0.0.9:8123&scheme=http')).json();
    expect([asked.upstream, asked.scheme]).toEqual(['http://10.0.0.9:8123', 'http']);
    expect(asked.snippet).toContain('reverse_proxy "http://10.0.0.9:8123"');
    expect(setup.files[0].content).toContain('"https://home.lan.example" {');
    expect(setup.files[0].content).toContain('reverse_proxy "http://homeassistant:8123"');

    // A plain-http base URL (a LAN address) gets http in the proxy configuration; the upstream default applies.
    await createFrom(t, { preset: 'uptime-kuma', presetInputs: { baseUrl: 'http://status.lan:8080' } });
    const kuma = (await t.admin('GET', '/api/admin/applications/uptime-kuma')).json();
    expect([kuma.forwardAuth, kuma.allowedGroups]).toEqual([{ hosts: ['status.lan:8080'], basic: false }, null]);
    const kumaSetup = (await t.admin('GET', '/api/admin/applications/uptime-kuma/setup')).json();
    expect(kumaSetup.files.find((f: { name: string }) => f.name === 'Caddyfile').content).toContain('"http://status.lan:8080" {');
    expect(kumaSetup.files.find((f: { name: string }) => f.name === 'Caddyfile').content).toContain('reverse_proxy "http://127.0.0.1:3001"');
    const kumaSnippet = (await t.admin('GET', '/api/admin/applications/uptime-kuma/forward-auth/snippet?proxy=caddy')).json();
    expect([kumaSnippet.upstream, kumaSnippet.scheme, kumaSnippet.snippet]).toEqual(['http://127.0.0.1:3001', 'http', kumaSetup.files.find((f: { name: string }) => f.name === 'Caddyfile').content]);
    expect(kuma.name).toBe('Uptime Kuma');
  });

  it('refuse an upstream with a path, a host another application protects, and a group that does not exist, writing nothing', async () => {
    const before = await count(t);
    const path = await t.admin('POST', '/api/admin/applications', { preset: 'uptime-kuma', id: 'kuma2', presetInputs: { baseUrl: 'https://kuma2.lan.example', upstream: 'http://127.0.0.1:3001/status' } });
    expect(path.json().errors).toEqual([{ path: 'body.presetInputs.upstream', message: 'must be http:// or https:// and a host with an optional port, nothing more (e.g. http://127.0.0.1:8080)' }]);
    const group = await t.admin('POST', '/api/admin/applications', { preset: 'uptime-kuma', id: 'kuma2', presetInputs: { baseUrl: 'https://kuma2.lan.example', allowedGroup: 'nobody' } });
    expect(group.json().errors).toEqual([{ path: 'body.presetInputs.allowedGroup', message: 'there is no group "nobody"' }]);
    const taken = await t.admin('POST', '/api/admin/applications', { preset: 'home-assistant', id: 'ha2', presetInputs: { baseUrl: 'https://home.lan.example' } });
    expectProblem(taken, 409, 'host_in_use');
    expect(await count(t)).toBe(before);
  });

  it('offer forward auth to an application made by version 1, which recorded no forwardAuth, and apply it on upgrade', async () => {
    await createFrom(t, { preset: 'home-assistant', id: 'ha-old', presetInputs: { baseUrl: 'https://old-home.lan.example' } });
    // As version 1 left it: no forward auth, and none recorded as applied.
    expect((await t.admin('PATCH', '/api/admin/applications/ha-old', { forwardAuth: null })).statusCode).toBe(200);
    const row = (await one(t.db.select().from(applications).where(eq(applications.id, 'ha-old'))))!;
    const { forwardAuth: _dropped, ...applied } = row.preset!.applied;
    await exec(t.db.update(applications).set({ preset: { ...row.preset!, version: 1, applied } }).where(eq(applications.id, 'ha-old')));
    const status = (await t.admin('GET', '/api/admin/applications/ha-old/preset')).json();
    expect(status.differences).toEqual([
      { field: 'forwardAuth', applied: null, offered: { hosts: ['old-home.lan.example'], basic: false }, current: null, changedHere: false },
    ]);
    const upgraded = await t.admin('POST', '/api/admin/applications/ha-old/preset/upgrade', {});
    expect(upgraded.statusCode, upgraded.body).toBe(200);
    expect(upgraded.json()).toMatchObject({ taken: ['forwardAuth'], kept: [], preset: { version: 2, differences: [] } });
    expect((await t.admin('GET', '/api/admin/applications/ha-old')).json().forwardAuth).toEqual({ hosts: ['old-home.lan.example'], basic: false });
  });
});

describe('a later preset version is offered, never forced', () => {
  /** The application as an older version of the Outline preset made it: another callback path and no post-logout address. */
  async function madeByVersionZero(t: TestApp) {
    await createFrom(t, { preset: 'outline', presetInputs: { baseUrl: 'https://wiki.lan.example' } });
    const row = (await one(t.db.select().from(applications).where(eq(applications.id, 'outline'))))!;
    const applied = { ...row.preset!.applied, redirectUris: ['https://wiki.lan.example/auth/oidc/callback'], postLogoutRedirectUris: null };
    await exec(t.db.update(applications)
      .set({ redirectUris: ['https://wiki.lan.example/auth/oidc/callback'], postLogoutRedirectUris: null, preset: { ...row.preset!, version: 0, applied } })
      .where(eq(applications.id, 'outline')));
  }

  it('shows what the current version sets differently, takes the settings nobody changed, and keeps the one an administrator changed', async () => {
    const t = await makeApp({ clock: T0 });
    await madeByVersionZero(t);
    // The administrator adds the panel's Test sign-in callback (not a change to what the app uses) and a post-logout address of their own.
    const patched = await t.admin('PATCH', '/api/admin/applications/outline', {
      redirectUris: ['https://wiki.lan.example/auth/oidc/callback', `${t.config.issuer}/admin/callback`],
      postLogoutRedirectUris: ['https://wiki.lan.example/bye'],
    });
    expect(patched.statusCode, patched.body).toBe(200);

    const status = await t.admin('GET', '/api/admin/applications/outline/preset');
    expect(status.statusCode).toBe(200);
    expect(status.json()).toEqual({
      id: 'outline',
      name: 'Outline',
      version: 0,
      latestVersion: 1,
      inputs: { baseUrl: 'https://wiki.lan.example' },
      differences: [
        {
          field: 'redirectUris',
          applied: ['https://wiki.lan.example/auth/oidc/callback'],
          offered: ['https://wiki.lan.example/auth/oidc.callback'],
          current: ['https://wiki.lan.example/auth/oidc/callback'],
          changedHere: false,
        },
        { field: 'postLogoutRedirectUris', applied: null, offered: ['https://wiki.lan.example/'], current: ['https://wiki.lan.example/bye'], changedHere: true },
      ],
    });

    const upgraded = await t.admin('POST', '/api/admin/applications/outline/preset/upgrade', {});
    expect(upgraded.statusCode, upgraded.body).toBe(200);
    expect(upgraded.json()).toMatchObject({ taken: ['redirectUris'], kept: ['postLogoutRedirectUris'], preset: { version: 1, latestVersion: 1 } });
    const app = (await t.admin('GET', '/api/admin/applications/outline')).json();
    // The preset's callback replaced the old one; the administrator's post-logout address stays.
    expect(app.redirectUris).toEqual(['https://wiki.lan.example/auth/oidc.callback']);
    expect(app.postLogoutRedirectUris).toEqual(['https://wiki.lan.example/bye']);
    expect(app.preset).toEqual({ id: 'outline', version: 1 });
    expect(upgraded.json().preset.differences).toEqual([
      { field: 'postLogoutRedirectUris', applied: null, offered: ['https://wiki.lan.example/'], current: ['https://wiki.lan.example/bye'], changedHere: true },
    ]);

    // Named, the changed setting is taken too.
    const unknownField = await t.admin('POST', '/api/admin/applications/outline/preset/upgrade', { fields: ['audience'] });
    expect(unknownField.json().errors).toEqual([{ path: 'body.fields.0', message: '"audience" is not a setting the preset offers a change to' }]);
    const named = await t.admin('POST', '/api/admin/applications/outline/preset/upgrade', { fields: ['postLogoutRedirectUris'] });
    expect(named.json()).toMatchObject({ taken: ['postLogoutRedirectUris'], kept: [], preset: { differences: [] } });
    expect((await t.admin('GET', '/api/admin/applications/outline')).json().postLogoutRedirectUris).toEqual(['https://wiki.lan.example/']);
    const audit = await many(t.db.select().from(auditLog).where(eq(auditLog.action, 'application.updated')));
    expect(audit.at(-1)!.details).toEqual({ fields: ['postLogoutRedirectUris'], presetUpgraded: { preset: 'outline', version: 1 } });
  });
});

describe('Test sign-in runs the preset\'s requirements', () => {
  /**
   * A person signs up to the application (open sign-up) or signs in again, through the panel's test
   * flow; the admin API exchanges the code and answers the checks. `verified`: the address is
   * marked verified by an administrator first (sign-up alone does not verify it).
   */
  async function testSignIn(t: TestApp, appId: string, email: string, scope: string, verified = true) {
    const callback = `${t.config.issuer}/admin/callback`;
    const current = (await t.admin('GET', `/api/admin/applications/${appId}`)).json();
    if (!current.redirectUris.includes(callback)) {
      await t.admin('PATCH', `/api/admin/applications/${appId}`, { redirectUris: [...current.redirectUris, callback], authPolicy: { signup_policy: 'open' } });
    }
    const known = await one(t.db.select({ id: people.id }).from(people).where(eq(people.email, email)));
    const session = known ? await signIn(t, { email, applicationId: appId }) : await signUp(t, { email, applicationId: appId });
    expect(session.statusCode, session.body).toBeLessThan(300);
    const person = (await one(t.db.select({ id: people.id }).from(people).where(eq(people.email, email))))!;
    if (!known) await exec(t.db.update(people).set({ emailVerified: verified }).where(eq(people.id, person.id)));
    const cookie = `gatehouse_session=${sessionCookieOf(session)}`;
    const pkce = pkcePair();
    const authorized = await authorize(t, {
      response_type: 'code', client_id: appId, redirect_uri: callback, scope, state: 'st', code_challenge: pkce.challenge, code_challenge_method: 'S256',
    }, cookie);
    const code = location(authorized).searchParams.get('code')!;
    const res = await t.admin('POST', `/api/admin/applications/${appId}/test-sign-in`, { code, codeVerifier: pkce.verifier });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { checks: { text: string; passed: boolean; detail: string }[] };
  }

  it('Outline: a refresh token was issued with offline_access, and not without it', async () => {
    const t = await makeApp({ clock: T0 });
    await createFrom(t, { preset: 'outline', presetInputs: { baseUrl: 'https://wiki.lan.example' } });
    const withRefresh = await testSignIn(t, 'outline', 'ann@example.com', 'openid offline_access profile email');
    expect(withRefresh.checks[0]).toEqual({ text: 'a refresh token was issued (Outline keeps the session with it)', passed: true, detail: 'a refresh token was issued' });
    const without = await testSignIn(t, 'outline', 'ann@example.com', 'openid profile email');
    expect(without.checks[0]).toEqual({
      text: 'a refresh token was issued (Outline keeps the session with it)',
      passed: false,
      detail: 'no refresh token (granted scope: openid profile email; Gatehouse issues one for offline_access with the refresh_token grant)',
    });
  });

  it('Vaultwarden: email_verified passes for a verified address and fails, in words, for an unverified one; Immich: the ID token is RS256', async () => {
    const t = await makeApp({ clock: T0 });
    await createFrom(t, { preset: 'vaultwarden', presetInputs: { baseUrl: 'https://vault.lan.example' } });
    const verified = await testSignIn(t, 'vaultwarden', 'vera@example.com', 'openid email profile');
    expect(verified.checks).toEqual([{ text: 'email_verified is true (Vaultwarden refuses unverified addresses)', passed: true, detail: 'email_verified is true' }]);
    const unverified = await testSignIn(t, 'vaultwarden', 'uma@example.com', 'openid email profile', false);
    expect(unverified.checks).toEqual([{ text: 'email_verified is true (Vaultwarden refuses unverified addresses)', passed: false, detail: 'email_verified is false' }]);

    await createFrom(t, { preset: 'immich', presetInputs: { baseUrl: 'https://photos.lan.example' } });
    const immich = await testSignIn(t, 'immich', 'vera@example.com', 'openid email profile');
    expect(immich.checks[0]).toEqual({ text: 'the ID token is signed with RS256 (Immich\'s Signing Algorithm)', passed: true, detail: 'signed with RS256' });
  });

  it('Grafana: the role claim resolves (Admin in the admin group, Viewer otherwise); Nextcloud and Gitea: preferred_username is there', async () => {
    const t = await makeApp({ clock: T0 });
    const now = t.clock.now();
    await exec(t.db.insert(groups).values({ id: 'admins', name: 'Admins', createdAt: now, updatedAt: now }));
    const grafana = await createFrom(t, { preset: 'grafana', presetInputs: { baseUrl: 'https://grafana.lan.example', adminGroup: 'admins' } });
    expect(grafana.customClaims).toEqual([{ name: 'grafana_role', source: { type: 'groupMap', map: [{ group: 'admins', value: 'Admin' }], default: 'Viewer' } }]);
    expect(grafana.grantTypes).toEqual(['authorization_code', 'refresh_token']);
    const viewer = await testSignIn(t, 'grafana', 'vic@example.com', 'openid profile email offline_access');
    expect(viewer.checks).toEqual([
      { text: 'the grafana_role claim resolves to a Grafana role (Admin, Editor, Viewer)', passed: true, detail: 'grafana_role is "Viewer"' },
      { text: 'a refresh token was issued (use_refresh_token keeps the Grafana session alive)', passed: true, detail: 'a refresh token was issued' },
    ]);
    const vic = (await one(t.db.select({ id: people.id }).from(people).where(eq(people.email, 'vic@example.com'))))!;
    expect((await t.admin('PUT', `/api/admin/groups/admins/members/${vic.id}`)).statusCode).toBe(204);
    const admin = await testSignIn(t, 'grafana', 'vic@example.com', 'openid profile email offline_access');
    expect(admin.checks[0]).toEqual({ text: 'the grafana_role claim resolves to a Grafana role (Admin, Editor, Viewer)', passed: true, detail: 'grafana_role is "Admin"' });

    await createFrom(t, { preset: 'nextcloud', presetInputs: { baseUrl: 'https://cloud.lan.example' } });
    const nextcloud = await testSignIn(t, 'nextcloud', 'vic@example.com', 'openid email profile groups');
    expect(nextcloud.checks).toEqual([
      { text: 'preferred_username is in the ID token (Nextcloud\'s user ID mapping)', passed: true, detail: 'preferred_username is "vic"' },
      { text: 'email is in the ID token (Nextcloud\'s e-mail mapping)', passed: true, detail: 'email is "vic@example.com"' },
    ]);

    await createFrom(t, { preset: 'gitea', presetInputs: { baseUrl: 'https://git.lan.example' } });
    const gitea = await testSignIn(t, 'gitea', 'vic@example.com', 'openid email profile groups');
    expect(gitea.checks).toEqual([{ text: 'preferred_username is in the ID token (Gitea\'s USERNAME = preferred_username)', passed: true, detail: 'preferred_username is "vic"' }]);
  });

  it('as a chosen member, without a sign-in: the same checks against what their tokens would carry, with the scopes the app asks for', async () => {
    const t = await makeApp({ clock: T0 });
    const now = t.clock.now();
    await exec(t.db.insert(groups).values({ id: 'admins', name: 'Admins', createdAt: now, updatedAt: now }));
    await createFrom(t, { preset: 'grafana', presetInputs: { baseUrl: 'https://grafana.lan.example', adminGroup: 'admins' } });
    await testSignIn(t, 'grafana', 'vic@example.com', 'openid profile email offline_access');
    const vic = (await one(t.db.select({ id: people.id }).from(people).where(eq(people.email, 'vic@example.com'))))!;
    const membership = (await t.admin('GET', '/api/admin/applications/grafana/users?q=vic')).json().users[0].id as string;
    const checksOf = async (query = '') => {
      const res = await t.admin('GET', `/api/admin/applications/grafana/users/${membership}/preset-checks${query}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    };
    expect(await checksOf()).toEqual({
      scope: 'openid profile email offline_access',
      checks: [
        { text: 'the grafana_role claim resolves to a Grafana role (Admin, Editor, Viewer)', passed: true, detail: 'grafana_role is "Viewer"' },
        { text: 'a refresh token was issued (use_refresh_token keeps the Grafana session alive)', passed: true, detail: 'a refresh token was issued' },
      ],
    });
    expect((await t.admin('PUT', `/api/admin/groups/admins/members/${vic.id}`)).statusCode).toBe(204);
    expect((await checksOf()).checks[0].detail).toBe('grafana_role is "Admin"');
    expect((await checksOf('?scope=openid%20profile')).checks[1]).toEqual({
      text: 'a refresh token was issued (use_refresh_token keeps the Grafana session alive)',
      passed: false,
      detail: 'no refresh token (granted scope: openid profile; Gatehouse issues one for offline_access with the refresh_token grant)',
    });
    const nobody = await t.admin('GET', '/api/admin/applications/grafana/users/usr_nobody/preset-checks');
    expect(nobody.statusCode).toBe(404);
    expect(nobody.json().code).toBe('user_not_found');
  });

  it('an application made without a preset gets no checks', async () => {
    const t = await makeApp({ clock: T0 });
    await t.admin('POST', '/api/admin/applications', { id: 'notes', name: 'Notes', audience: 'https://notes.lan.example/api', redirectUris: ['https://notes.lan.example/cb'] });
    expect((await testSignIn(t, 'notes', 'ann@example.com', 'openid')).checks).toEqual([]);
  });
});

describe('SAML presets (spec saml.md)', () => {
  let t: TestApp;
  let certificates: string[];
  const SAML_PRESETS = PRESETS.filter((p) => p.protocol === 'saml');
  /** The NameID format URIs by the setting's word. */
  const FORMATS: Record<string, string> = {
    persistent: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
    emailAddress: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
    unspecified: 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
  };
  beforeAll(async () => {
    t = await makeApp({ clock: T0, perFile: true, config: { env: { GATEHOUSE_SIGN_UP_RATE_LIMIT: '100' } } });
    certificates = await idpCertificates(t);
  });

  it('each makes a service provider the IdP answers: the app\'s AuthnRequest to its ACS gets a signed Response with the NameID and attribute names the app reads', async () => {
    expect(SAML_PRESETS.map((p) => p.id)).toEqual(['saml-generic', 'nextcloud-saml', 'zammad', 'snipe-it', 'bookstack', 'wikijs', 'aws-iam-identity-center']);
    for (const [n, preset] of SAML_PRESETS.entries()) {
      const inputs = Object.fromEntries(preset.inputs.map((i) => [i.key, i.example]));
      const created = await createFrom(t, { preset: preset.id, presetInputs: inputs });
      const wanted = preset.application(inputs).saml!;
      // Stored as the preset set it, with the defaults the field fills in.
      expect(created.saml, preset.id).toEqual({
        entityId: wanted.entityId,
        acs: wanted.acs.map((a, index) => ({ url: a.url, binding: 'HTTP-POST', index })),
        slo: wanted.slo,
        nameId: wanted.nameId,
        attributes: wanted.attributes,
        signResponse: true,
        signAssertion: true,
        wantAuthnRequestsSigned: false,
        spCertificates: [],
        idpInitiated: false,
      });
      // Nothing to offer: what the application has is what the preset set.
      expect((await t.admin('GET', `/api/admin/applications/${preset.id}/preset`)).json().differences, preset.id).toEqual([]);
      expect((await t.admin('PATCH', `/api/admin/applications/${preset.id}`, { authPolicy: { signup_policy: 'open' } })).statusCode).toBe(200);
      const email = `saml${n}@example.com`;
      const signedUp = await signUp(t, { email, name: `Sam Lee ${n}`, applicationId: preset.id });
      expect(signedUp.statusCode, signedUp.body).toBe(201);
      const cookie = `gatehouse_session=${sessionCookieOf(signedUp)}`;
      const acs = wanted.acs[0]!.url;
      const xml = authnRequestXml(t, { issuer: wanted.entityId, acsUrl: acs });
      const res = await t.app.inject({ method: 'GET', url: redirectUrl('/saml/sso', xml, { relayState: 'rs' }), headers: { cookie } });
      const answer = responseOf(res);
      expect(answer.action, preset.id).toBe(acs);
      expect(answer.relayState).toBe('rs');
      const assertion = el(answer.doc, 'Assertion');
      expect(verifySigned(answer.xml, assertion.getAttribute('ID')!, certificates), preset.id).toBe(true);
      expect(el(answer.doc, 'Audience').textContent).toBe(wanted.entityId);
      const nameId = el(answer.doc, 'NameID');
      expect(nameId.getAttribute('Format'), preset.id).toBe(FORMATS[wanted.nameId.format]);
      if (wanted.nameId.source === 'email') expect(nameId.textContent).toBe(email);
      const names = Array.from(answer.doc.getElementsByTagNameNS('*', 'Attribute')).map((a) => a.getAttribute('Name'));
      // The ones with a value for this person (an attribute without one is left out: no given or family name, no groups here).
      const expected = wanted.attributes
        ? wanted.attributes.filter((a) => a.source.type === 'personField' && ['email', 'username', 'name'].includes(a.source.field)).map((a) => a.name)
        : ['email', 'username', 'name'];
      expect(names, preset.id).toEqual(expect.arrayContaining(expected));
      const emailName = wanted.attributes?.find((a) => a.source.type === 'personField' && a.source.field === 'email')?.name ?? 'email';
      expect(attributeValues(answer.doc, emailName), preset.id).toEqual([email]);
    }
  });

  it('BookStack: what the preset sets, and the .env with Gatehouse\'s endpoints and the certificate as a placeholder', async () => {
    const detail = (await t.admin('GET', '/api/admin/presets/bookstack')).json();
    expect(detail).toMatchObject({ category: 'saml', protocol: 'saml', testedWith: { status: 'configuration', test: 'test/integration/presets.test.ts' } });
    expect(detail.sets.saml).toEqual({
      entityId: '{baseUrl}/saml2/metadata',
      acs: [{ url: '{baseUrl}/saml2/acs' }],
      slo: { url: '{baseUrl}/saml2/sls', binding: 'HTTP-Redirect' },
      nameId: { format: 'persistent', source: 'id' },
      attributes: [
        { name: 'email', source: { type: 'personField', field: 'email' } },
        { name: 'name', source: { type: 'personField', field: 'name' } },
        { name: 'username', source: { type: 'personField', field: 'username' } },
        { name: 'groups', source: { type: 'groups' } },
      ],
      signResponse: true,
      signAssertion: true,
    });
    const setup = (await t.admin('GET', '/api/admin/applications/bookstack/setup')).json();
    const env = setup.files.find((f: { name: string }) => f.name === '.env').content as string;
    const issuer = t.config.issuer.replace(/\/$/, '');
    expect(env).toContain(`SAML2_IDP_ENTITYID=${issuer}/saml\nSAML2_AUTOLOAD_METADATA=false\nSAML2_IDP_SSO=${issuer}/saml/sso\nSAML2_IDP_SLO=${issuer}/saml/slo\n`);
    expect(env).toContain('SAML2_EMAIL_ATTRIBUTE=email\nSAML2_DISPLAY_NAME_ATTRIBUTES=name\n');
    expect(env).toContain("SAML2_IDP_x509=<the signing certificate from the application's SAML tab>\n");
  });

  it('a later version is offered against what the preset set: the SP\'s imported certificate is not an administrator\'s change, a moved ACS is', async () => {
    // As an older version made it: no attributes of its own (the defaults).
    const row = (await one(t.db.select().from(applications).where(eq(applications.id, 'bookstack'))))!;
    const older = { ...(row.preset!.applied.saml as Record<string, unknown>), attributes: null };
    await exec(t.db.update(applications).set({ saml: { ...row.saml!, attributes: null }, preset: { ...row.preset!, version: 0, applied: { ...row.preset!.applied, saml: older } } }).where(eq(applications.id, 'bookstack')));
    const key = await spKey('docs.lan.example');
    const imported = await t.admin('POST', '/api/admin/applications/bookstack/saml/metadata', {
      xml: spMetadataXml({ entityId: 'https://docs.lan.example/saml2/metadata', acs: ['https://docs.lan.example/saml2/acs'], slo: 'https://docs.lan.example/saml2/sls', certificate: key.certificatePem }),
    });
    expect(imported.statusCode, imported.body).toBe(200);
    expect(imported.json().saml.spCertificates).toHaveLength(1);
    const offered = (await t.admin('GET', '/api/admin/applications/bookstack/preset')).json().differences;
    expect(offered).toEqual([{ field: 'saml', applied: older, offered: row.preset!.applied.saml, current: older, changedHere: false }]);
    const saml = { ...imported.json().saml, acs: [{ url: 'https://docs.lan.example/login/saml2/acs' }] };
    expect((await t.admin('PATCH', '/api/admin/applications/bookstack', { saml })).statusCode).toBe(200);
    const changed = (await t.admin('GET', '/api/admin/applications/bookstack/preset')).json().differences;
    expect(changed).toMatchObject([{ field: 'saml', changedHere: true, current: { acs: [{ url: 'https://docs.lan.example/login/saml2/acs' }] } }]);
  });

  it('refuses a generic entity ID that is not a URI and a Wiki.js strategy key with a slash, naming each input, writing nothing', async () => {
    const before = await count(t);
    const generic = await t.admin('POST', '/api/admin/applications', { preset: 'saml-generic', id: 'bad-sp', presetInputs: { baseUrl: 'https://x.lan.example', entityId: 'not a uri', acsUrl: 'https://x.lan.example/acs?x=1' } });
    expect(expectValidation(generic, ['body.presetInputs.entityId', 'body.presetInputs.acsUrl']).errors).toEqual([
      { path: 'body.presetInputs.entityId', message: 'a URI without spaces (an https URL or a URN), as the app\'s metadata gives it' },
      { path: 'body.presetInputs.acsUrl', message: 'must not contain a query or fragment' },
    ]);
    const wiki = await t.admin('POST', '/api/admin/applications', { preset: 'wikijs', id: 'bad-wiki', presetInputs: { baseUrl: 'https://w.lan.example', strategyKey: 'a/b' } });
    expect(expectValidation(wiki, ['body.presetInputs.strategyKey']).errors).toEqual([
      { path: 'body.presetInputs.strategyKey', message: 'the key from the strategy\'s callback URL (/login/<key>/callback): letters, digits and -' },
    ]);
    expect(await count(t)).toBe(before);
  });
});
