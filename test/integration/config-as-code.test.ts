/**
 * Configuration as code (spec presets-and-operations.md, "Configuration as code"): `GET
 * /api/admin/config` and `POST /api/admin/config/apply`, on SQLite and (unit-postgres) PostgreSQL.
 *
 * - round trip: export → apply to a server without configuration → export, byte for byte; the
 *   second apply plans nothing and writes nothing;
 * - a dry run's plan, field by field, with nothing changed; the apply's audit entries and webhook
 *   events are the services' own;
 * - prune deletes only what a section of the file leaves out;
 * - an invalid file is refused whole, every problem with its path and line;
 * - secrets by reference only (the server's GATEHOUSE_SECRET_* variables, its secrets folder, or
 *   values sent with the file), proven at the token endpoint and by a real webhook receiver, and
 *   never in an export;
 * - owner or admin token only.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { makeApp, type TestApp } from '../helpers/app.js';
import { administrator, panelToken } from '../helpers/admins.js';
import { insertApiKey } from '../helpers/webhook-fixtures.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { token } from '../helpers/oauth-inject.js';

const PASSWORD = 'violet-harbour-teapot-glacier-91';
const CLIENT_SECRET = 'cs-notes-0123456789abcdefghijklmnopqrstuv';
const WEBHOOK_SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
const ENV = { GATEHOUSE_SECRET_NOTES_CLIENT: CLIENT_SECRET };

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const receivers: Receiver[] = [];
afterEach(async () => {
  while (receivers.length) await receivers.pop()!.close();
});

async function ok(res: Awaited<ReturnType<TestApp['admin']>>, status = 200) {
  expect(res.statusCode, res.body).toBe(status);
  return res.json();
}

const exportYaml = async (t: TestApp) => {
  const res = await t.admin('GET', '/api/admin/config');
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toBe('application/yaml; charset=utf-8');
  return res.body;
};

/** POSTs a file as the CLI does (JSON with the secrets it resolved), or as YAML itself. */
function apply(t: TestApp, document: string, query = '', extra: { secrets?: Record<string, string>; unresolved?: Record<string, string> } | 'yaml' = {}) {
  const url = `/api/admin/config/apply${query ? `?${query}` : ''}`;
  return extra === 'yaml'
    ? t.admin('POST', url, document, { 'content-type': 'application/yaml' })
    : t.admin('POST', url, { document, ...extra });
}

const auditCount = async (t: TestApp) => {
  let n = 0;
  let cursor: string | null = null;
  do {
    const page = await ok(await t.admin('GET', `/api/admin/audit-log?limit=200${cursor ? `&cursor=${cursor}` : ''}`));
    n += page.entries.length;
    cursor = page.nextCursor;
  } while (cursor);
  return n;
};

async function person(t: TestApp, email: string) {
  return (await ok(await t.admin('POST', '/api/admin/people', { email, name: email.split('@')[0], password: PASSWORD }), 201)).id as string;
}

/** A server configured through the admin API with (nearly) every setting there is. */
async function configureEverything(t: TestApp) {
  await ok(await t.admin('PATCH', '/api/admin/settings/password-policy', { minLength: 12, minStrength: 3 }));
  await ok(await t.admin('POST', '/api/admin/sso-groups', { id: 'home', name: 'Home' }), 201);
  await ok(await t.admin('POST', '/api/admin/groups', { id: 'family', name: 'Family', description: 'Everyone at home' }), 201);
  await ok(await t.admin('POST', '/api/admin/groups', { id: 'media', name: 'Media users' }), 201);
  await ok(await t.admin('POST', '/api/admin/applications', {
    id: 'notes', name: 'Team Notes', audience: 'https://notes.example.com/api',
    redirectUris: ['https://notes.example.com/cb', 'https://notes.example.com/cb2'],
    postLogoutRedirectUris: ['https://notes.example.com/bye'],
    clientType: 'web', webhookUrl: 'https://hooks.example.com/notes', ssoGroupId: 'home',
    authPolicy: {
      signup_policy: 'open', allowed_providers: ['email'], mfa: 'required',
      profile_fields: [{ key: 'team', label: 'Team', type: 'select', options: ['Red', 'Blue'], required: true, description: 'Which team' }],
    },
    grantTypes: ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code'],
    backchannelLogoutUri: 'https://notes.example.com/logout', backchannelLogoutSessionRequired: false,
    branding: { accentColor: '#1a5fb4' }, consent: 'explicit', signingAlg: 'ES256', ldap: { enabled: true },
  }), 201);
  await ok(await t.admin('POST', '/api/admin/applications', {
    id: 'board', name: 'Board', audience: 'https://board.example.com/api', redirectUris: ['http://127.0.0.1:5173/cb'], clientType: 'spa', signingAlg: 'EdDSA',
  }), 201);
  await ok(await t.admin('POST', '/api/admin/applications', { preset: 'grafana', presetInputs: { baseUrl: 'https://grafana.example.com' } }), 201);
  // The client secret of notes from a reference, set by a first file (the server's GATEHOUSE_SECRET_*).
  const exported = await exportYaml(t);
  const withReference = exported.replace('  notes:\n', '  notes:\n    clientSecret: ${GATEHOUSE_SECRET_NOTES_CLIENT}\n    webhookSecret: ${NOTES_HOOK}\n');
  await ok(await apply(t, withReference, '', { secrets: { '${NOTES_HOOK}': WEBHOOK_SECRET } }));
  const ann = await person(t, 'ann@example.com');
  const bob = await person(t, 'bob@example.com');
  const cy = await person(t, 'cy@example.com');
  await ok(await t.admin('PUT', `/api/admin/administrators/${ann}`, { role: 'owner' }));
  await ok(await t.admin('PUT', `/api/admin/administrators/${bob}`, { role: 'app_manager', applications: ['notes', 'board'] }));
  await ok(await t.admin('PUT', `/api/admin/administrators/${cy}`, { role: 'people_manager' }));
}

const EVERYTHING = `# Gatehouse configuration (docs/configuration-as-code.md).
# Apply with: gatehouse config apply FILE [--dry-run] [--prune]
# Secrets are references, never values: \${ENV_NAME} or file:PATH.

version: 1
passwordPolicy:
  minLength: 12
  minStrength: 3
  rejectBreached: true
ssoGroups:
  home:
    name: Home
groups:
  family:
    name: Family
    description: Everyone at home
  media:
    name: Media users
    description: null
applications:
  board:
    name: Board
    audience: https://board.example.com/api
    redirectUris:
      - http://127.0.0.1:5173/cb
    postLogoutRedirectUris: null
    clientType: spa
    webhookUrl: null
    ssoGroupId: null
    authPolicy:
      signup_policy: invite_only
      allowed_providers:
        - email
      profile_fields: []
      mfa: optional
    grantTypes:
      - authorization_code
      - refresh_token
    backchannelLogoutUri: null
    backchannelLogoutSessionRequired: true
    branding:
      accentColor: null
    consent: implicit
    signingAlg: EdDSA
    ldap:
      enabled: false
    preset: null
`;

describe('round trip', () => {
  it('export → apply to a server without configuration → export gives the same bytes; applying again changes nothing', async () => {
    const source = await makeApp({ config: { env: ENV } });
    await configureEverything(source);
    const text = await exportYaml(source);
    expect(text.startsWith(EVERYTHING)).toBe(true);
    // Secrets appear as references, never as values.
    expect(text).toContain('    clientSecret: ${GATEHOUSE_SECRET_NOTES_CLIENT}\n');
    expect(text).toContain('    webhookSecret: ${NOTES_HOOK}\n');
    for (const secret of [CLIENT_SECRET, WEBHOOK_SECRET, 'ghs_', 'ghl_', 'whsec_']) expect(text).not.toContain(secret);
    expect(text).toContain(`administrators:
  ann@example.com:
    role: owner
  bob@example.com:
    role: app_manager
    applications:
      - board
      - notes
  cy@example.com:
    role: people_manager
`);
    expect(text).toContain(`    preset:
      id: grafana
      version: 1
      inputs:
        baseUrl: https://grafana.example.com
`);

    // A new server: the same people (data, not configuration), none of the configuration.
    const target = await makeApp({ config: { env: ENV } });
    for (const email of ['ann@example.com', 'bob@example.com', 'cy@example.com']) await person(target, email);
    const first = await ok(await apply(target, text, '', { secrets: { '${NOTES_HOOK}': WEBHOOK_SECRET } }));
    expect(first.dryRun).toBe(false);
    expect(first.plan.map((p: { action: string; kind: string; id: string }) => `${p.action} ${p.kind} ${p.id}`)).toEqual([
      'update passwordPolicy passwordPolicy',
      'create ssoGroup home',
      'create group family',
      'create group media',
      'create application board',
      'create application grafana',
      'create application notes',
      'create administrator ann@example.com',
      'create administrator bob@example.com',
      'create administrator cy@example.com',
    ]);
    // Generated where the file names no reference, shown once: grafana's client secret, notes' LDAP password.
    expect(first.secrets.map((s: { path: string }) => s.path)).toEqual(['applications.grafana.clientSecret', 'applications.notes.ldapPassword']);
    expect(first.secrets[0].value).toMatch(/^ghs_/);
    expect(await exportYaml(target)).toBe(text);

    const audited = await auditCount(target);
    const again = await ok(await apply(target, text, '', { secrets: { '${NOTES_HOOK}': WEBHOOK_SECRET } }));
    expect(again).toEqual({ dryRun: false, plan: [], secrets: [] });
    expect(await auditCount(target)).toBe(audited);
    expect(await exportYaml(target)).toBe(text);

    // The referenced client secret is the application's: a client_credentials grant with it works.
    const basic = (secret: string) => ({ authorization: `Basic ${Buffer.from(`notes:${secret}`).toString('base64')}` });
    expect((await token(target, { grant_type: 'client_credentials' }, basic(CLIENT_SECRET))).statusCode).toBe(200);
    expect((await token(target, { grant_type: 'client_credentials' }, basic('cs-notes-wrong-0123456789abcdefghijklmn'))).statusCode).toBe(401);
  });
});
