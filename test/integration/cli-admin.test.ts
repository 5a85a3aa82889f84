/**
 * Headless administration end to end: `gatehouse app list|create|show|update|delete`, `invite`,
 * `member list` and `key rotate` run as child processes of the built CLI against a real server
 * (its admin API, so its rules and audit log apply), with the admin token from the data directory,
 * from --token-file, ADMIN_TOKEN or ADMIN_TOKEN_FILE (never --token); `--json` output; errors in
 * words with the problem code.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, cleanEnv, ensureBuilt, removeTempDirs, runCli, startServer, tempDir, type RunResult, type ServerProcess } from '../helpers/server-process.js';
import { failed, ok } from '../helpers/cli-result.js';
import { spMetadataXml } from '../helpers/saml-sp.js';

let server: ServerProcess;
let dataDir: string;
let env: NodeJS.ProcessEnv;
let token: string;

const gatehouse = (args: string[], extra: NodeJS.ProcessEnv = {}) => runCli(args, { ...env, ...extra });

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: res.status === 204 ? undefined : ((await res.json()) as any) };
}

const create = ['app', 'create', '--name', 'Team Notes', '--redirect-uri', 'https://notes.example.com/cb', '--audience', 'https://notes.example.com/api'];

beforeAll(async () => {
  ensureBuilt();
  dataDir = tempDir('gatehouse-cli-admin-');
  server = await startServer(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', dataDir], cleanEnv());
  token = (await import('node:fs')).readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  // The data directory gives the CLI its admin token; the URL comes from the environment.
  env = cleanEnv({ GATEHOUSE_DATA_DIR: dataDir, GATEHOUSE_URL: server.url });
}, 300_000);

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

describe('gatehouse app', () => {
  it('creates a web application and prints its client secret once, which the token endpoint accepts', async () => {
    const out = ok(await gatehouse(create));
    const lines = out.trimEnd().split('\n');
    expect(lines[0]).toBe('Created application team-notes (Team Notes, web).');
    expect(lines[1]).toBe('Client ID:     team-notes');
    const secret = /^Client secret: (\S+)$/.exec(lines[2]!)?.[1];
    expect(secret).toMatch(/^ghs_[\w-]{43}$/);
    expect(lines[3]).toBe('Store the client secret now: it is shown only this once (rotate it in the panel if lost).');
    expect(lines).toHaveLength(4);

    // The secret authenticates the client: a bad grant is invalid_grant, not invalid_client.
    const tokenAt = (auth: string) =>
      fetch(`${server.url}/api/auth/oauth2/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(auth).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=refresh_token&refresh_token=nothing',
      }).then(async (r) => [r.status, ((await r.json()) as { error: string }).error]);
    expect(await tokenAt(`team-notes:${secret}`)).toEqual([400, 'invalid_grant']);
    expect(await tokenAt('team-notes:ghs_wrong')).toEqual([401, 'invalid_client']);

    // Through the admin API: the server's audit log records it, as the admin.
    const audit = await api('GET', '/api/admin/audit-log?action=application.created&applicationId=team-notes');
    expect(audit.body.entries.map((e: { actor: string; applicationId: string }) => [e.actor, e.applicationId])).toEqual([['admin', 'team-notes']]);
  });

  it('--json prints the created record with its id and client secret; a public client has no secret', async () => {
    const web = JSON.parse(ok(await gatehouse(['app', 'create', '--json', '--id', 'wiki', '--name', 'Wiki', '--type', 'web', '--redirect-uri', 'https://wiki.example.com/cb', '--audience', 'https://wiki.example.com/api'])));
    expect(web).toMatchObject({ id: 'wiki', name: 'Wiki', clientType: 'web', redirectUris: ['https://wiki.example.com/cb'], audience: 'https://wiki.example.com/api' });
    expect(web.clientSecret).toMatch(/^ghs_/);

    const spa = ok(
      await gatehouse([
        'app', 'create', '--name', 'Board', '--type', 'spa', '--audience', 'urn:board',
        '--redirect-uri', 'https://board.example.com/cb', '--redirect-uri', 'http://localhost:5173/cb',
      ]),
    );
    expect(spa).toBe('Created application board (Board, spa).\nClient ID: board\n');
    expect((await api('GET', '/api/admin/applications/board')).body.redirectUris).toEqual(['https://board.example.com/cb', 'http://localhost:5173/cb']);
  });

  it('lists and shows applications, never with a secret', async () => {
    const list = ok(await gatehouse(['app', 'list']));
    expect(list).toBe(
      [
        'ID          NAME        TYPE  AUDIENCE                       REDIRECT URIS',
        'team-notes  Team Notes  web   https://notes.example.com/api  https://notes.example.com/cb',
        'wiki        Wiki        web   https://wiki.example.com/api   https://wiki.example.com/cb',
        'board       Board       spa   urn:board                      https://board.example.com/cb http://localhost:5173/cb',
        '',
      ].join('\n'),
    );
    const json = JSON.parse(ok(await gatehouse(['app', 'list', '--json'])));
    expect(json.applications.map((a: { id: string }) => a.id)).toEqual(['team-notes', 'wiki', 'board']);
    expect(json).toEqual({ applications: (await api('GET', '/api/admin/applications')).body.applications });
    expect(JSON.stringify(json)).not.toMatch(/ghs_|clientSecret/);

    const show = ok(await gatehouse(['app', 'show', 'board']));
    const record = (await api('GET', '/api/admin/applications/board')).body;
    expect(show).toBe(
      [
        'ID:             board',
        'Name:           Board',
        'Type:           spa',
        'Audience:       urn:board',
        'Redirect URIs:  https://board.example.com/cb',
        '                http://localhost:5173/cb',
        'Sign-up:        invite_only',
        'Allowed groups: (no group rule)',
        'Providers:      email',
        'Profile fields: (none)',
        'Webhook:        (none)',
        'Grant types:    authorization_code, refresh_token',
        'Logout URI:     (none)',
        'Token signing:  RS256',
        'Shared sign-in: (none)',
        'LDAP:           off',
        'Forward auth:   (none)',
        `Created:        ${record.createdAt}`,
        `Updated:        ${record.updatedAt}`,
        '',
      ].join('\n'),
    );
    expect(JSON.parse(ok(await gatehouse(['app', 'show', 'board', '--json'])))).toEqual(record);
  });

  it('sets grant types (device_code for short) and the back-channel logout URI', async () => {
    const created = JSON.parse(ok(await gatehouse([
      'app', 'create', '--json', '--name', 'Reports', '--audience', 'https://reports.example.com/api', '--redirect-uri', 'https://reports.example.com/cb',
      '--grant-type', 'client_credentials', '--grant-type', 'device_code', '--backchannel-logout-uri', 'https://reports.example.com/logout',
    ])));
    expect(created).toMatchObject({
      id: 'reports', grantTypes: ['client_credentials', 'urn:ietf:params:oauth:grant-type:device_code'], backchannelLogoutUri: 'https://reports.example.com/logout',
    });
    const show = ok(await gatehouse(['app', 'show', 'reports']));
    expect(show).toContain('Grant types:    client_credentials, device_code\nLogout URI:     https://reports.example.com/logout\n');
    failed(
      await gatehouse(['app', 'create', '--name', 'Kiosk', '--type', 'spa', '--audience', 'urn:kiosk', '--redirect-uri', 'https://kiosk.example.com/cb', '--grant-type', 'client_credentials']),
      'The request is not valid. (validation_failed)',
      '  --grant-type: client_credentials is allowed only for confidential (web) applications',
    );
    expect(ok(await gatehouse(['app', 'create', '--help']))).toContain('--backchannel-logout-uri URI');
    ok(await gatehouse(['app', 'delete', 'reports', '--yes']));
  });

  it('sets the signing algorithm at create and with `app update`, which applies to new tokens; others are refused naming the flag', async () => {
    const created = JSON.parse(ok(await gatehouse([
      'app', 'create', '--json', '--name', 'Photos', '--type', 'spa', '--audience', 'urn:photos', '--redirect-uri', 'https://photos.example.com/cb', '--signing-alg', 'ES256',
    ])));
    expect(created).toMatchObject({ id: 'photos', signingAlg: 'ES256' });
    expect(ok(await gatehouse(['app', 'show', 'photos']))).toContain('Logout URI:     (none)\nToken signing:  ES256\n');
    expect(ok(await gatehouse(['app', 'update', 'photos', '--signing-alg', 'EdDSA']))).toBe(
      'Updated application photos: signingAlg.\nTokens issued from now on are signed with EdDSA; tokens issued before still verify.\n',
    );
    expect((await api('GET', '/api/admin/applications/photos')).body.signingAlg).toBe('EdDSA');
    expect(JSON.parse(ok(await gatehouse(['app', 'update', 'photos', '--name', 'Photo Library', '--json'])))).toMatchObject({ name: 'Photo Library', signingAlg: 'EdDSA' });
    for (const args of [['app', 'update', 'photos', '--signing-alg', 'HS256'], ['app', 'create', '--name', 'Odd', '--audience', 'urn:odd', '--redirect-uri', 'https://odd.example.com/cb', '--signing-alg', 'none']]) {
      failed(await gatehouse(args), 'The request is not valid. (validation_failed)', '  --signing-alg (RS256|ES256|EdDSA): is not one of the allowed values');
    }
    failed(await gatehouse(['app', 'update', 'photos']), 'Give at least one setting to change, e.g. --signing-alg ES256 (see `gatehouse app update --help`).');
    failed(await gatehouse(['app', 'update', 'gone', '--signing-alg', 'ES256']), 'There is no application with id "gone". (application_not_found)');
    const help = ok(await gatehouse(['app', 'update', '--help']));
    expect(help).toMatch(/^Usage: gatehouse app update APP \[flags\]\n/);
    expect(help).toContain('  --signing-alg RS256|ES256|EdDSA ');
    expect(help).not.toContain('--id ID');
    ok(await gatehouse(['app', 'delete', 'photos', '--yes']));
  });

  it('turns LDAP on (the service account\'s password printed once), shows it, makes a new password, turns it off', async () => {
    ok(await gatehouse(['app', 'create', '--name', 'Media', '--audience', 'https://media.example.com', '--redirect-uri', 'https://media.example.com/cb']));
    expect(ok(await gatehouse(['app', 'ldap', 'media']))).toBe('LDAP: off\n');
    const on = ok(await gatehouse(['app', 'ldap', 'media', 'on']));
    const password = /^Password: (ghl_[A-Za-z0-9_-]{43})$/m.exec(on)?.[1];
    expect(on).toBe(`LDAP:     on\nBind DN:  cn=media,ou=services,dc=gatehouse\nPassword: ${password}\nStore the password now: it is shown only this once.\n`);
    expect(ok(await gatehouse(['app', 'ldap', 'media']))).toBe('LDAP:    on\nBind DN: cn=media,ou=services,dc=gatehouse\n');
    expect(ok(await gatehouse(['app', 'show', 'media']))).toContain('LDAP:           on, bind DN cn=media,ou=services,dc=gatehouse\n');
    const rotated = JSON.parse(ok(await gatehouse(['app', 'ldap', 'media', 'new-password', '--json'])));
    expect(rotated).toEqual({ id: 'media', enabled: true, bindDn: 'cn=media,ou=services,dc=gatehouse', password: expect.stringMatching(/^ghl_/) });
    expect(rotated.password).not.toBe(password);
    expect(ok(await gatehouse(['app', 'ldap', 'media', 'off']))).toBe('LDAP: off\n');
    failed(await gatehouse(['app', 'ldap', 'media', 'new-password']), 'Application "media" does not have LDAP on; turn it on (PATCH {"ldap": {"enabled": true}}) first. (ldap_not_enabled)');
    failed(await gatehouse(['app', 'ldap', 'media', 'maybe']), 'Unknown action "maybe": use on, off or new-password (or nothing, to show the setting).');
    const created = JSON.parse(ok(await gatehouse(['app', 'create', '--json', '--ldap', '--name', 'Files', '--audience', 'https://files.example.com', '--redirect-uri', 'https://files.example.com/cb'])));
    expect(created).toMatchObject({ ldap: { enabled: true, bindDn: 'cn=files,ou=services,dc=gatehouse' }, ldapPassword: expect.stringMatching(/^ghl_/) });
    ok(await gatehouse(['app', 'delete', 'media', '--yes']));
    ok(await gatehouse(['app', 'delete', 'files', '--yes']));
  });

  it('gives an application RADIUS clients (each secret printed once), VLANs and a default VLAN, a new secret, and takes RADIUS off', async () => {
    ok(await gatehouse(['app', 'create', '--name', 'Office WiFi', '--audience', 'https://wifi.example.com', '--redirect-uri', 'https://wifi.example.com/cb']));
    expect(ok(await gatehouse(['app', 'radius', 'office-wifi']))).toBe('Application "office-wifi" has no RADIUS clients (gatehouse app radius office-wifi add NAME ADDRESS adds one).\n');
    const added = ok(await gatehouse(['app', 'radius', 'office-wifi', 'add', 'Office APs', '192.168.10.7/24']));
    const secret = /^Secret of Office APs: ([0-9a-f]{40})$/m.exec(added)?.[1];
    expect(secret).toBeDefined();
    expect(added).toContain('Office APs  192.168.10.0/24');
    expect(added).toContain('Type each secret into its gear now: it is shown only this once.');
    ok(await gatehouse(['app', 'radius', 'office-wifi', 'vlan', 'staff', '20']));
    const shown = ok(await gatehouse(['app', 'radius', 'office-wifi', 'default-vlan', '99']));
    expect(shown).toMatch(/VLANs: +staff → 20\nDefault VLAN: +99\n/);
    expect(shown).not.toContain(secret);
    const rotated = JSON.parse(ok(await gatehouse(['app', 'radius', 'office-wifi', 'new-secret', 'Office APs', '--json'])));
    expect(rotated.secrets['Office APs']).toMatch(/^[0-9a-f]{40}$/);
    expect(rotated.secrets['Office APs']).not.toBe(secret);
    failed(await gatehouse(['app', 'radius', 'office-wifi', 'vlan', 'staff', '5000']), '"5000" is not a VLAN (1–4094).');
    expect(ok(await gatehouse(['app', 'radius', 'office-wifi', 'off']))).toBe('Application "office-wifi" has no RADIUS clients (gatehouse app radius office-wifi add NAME ADDRESS adds one).\n');
    ok(await gatehouse(['app', 'delete', 'office-wifi', '--yes']));
  });

  it('makes a SAML service provider from its metadata file (--saml-metadata), in one request or not at all', async () => {
    const dir = tempDir('gatehouse-cli-saml-');
    const file = join(dir, 'sp.xml');
    writeFileSync(file, spMetadataXml({ entityId: 'https://wiki.example.com/saml/metadata', acs: ['https://wiki.example.com/saml/acs'], slo: 'https://wiki.example.com/saml/slo' }));
    const created = JSON.parse(ok(await gatehouse([
      'app', 'create', '--json', '--name', 'SAML Wiki', '--audience', 'https://samlwiki.example.com', '--redirect-uri', 'https://samlwiki.example.com/cb', '--saml-metadata', file,
    ])));
    expect(created.saml).toMatchObject({
      entityId: 'https://wiki.example.com/saml/metadata',
      acs: [{ url: 'https://wiki.example.com/saml/acs', binding: 'HTTP-POST', index: 1 }],
      slo: { url: 'https://wiki.example.com/saml/slo', binding: 'HTTP-Redirect' },
      nameId: { format: 'persistent', source: 'id' }, spCertificates: [],
    });
    expect((await api('GET', '/api/admin/applications/saml-wiki')).body.saml.entityId).toBe('https://wiki.example.com/saml/metadata');
    // Another application may not take the same entity ID; nothing is made.
    failed(
      await gatehouse(['app', 'create', '--name', 'Twin', '--audience', 'urn:twin', '--redirect-uri', 'https://twin.example/cb', '--saml-metadata', file]),
      'The entity ID https://wiki.example.com/saml/metadata is already another application\'s. (entity_id_in_use)',
    );
    expect((await api('GET', '/api/admin/applications/twin')).status).toBe(404);
    failed(await gatehouse(['app', 'update', 'saml-wiki', '--saml-metadata', join(dir, 'missing.xml')]), `--saml-metadata: cannot read ${join(dir, 'missing.xml')} (ENOENT).`);
    writeFileSync(join(dir, 'bad.xml'), '<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>');
    const bad = await gatehouse(['app', 'update', 'saml-wiki', '--saml-metadata', join(dir, 'bad.xml')]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^--saml-metadata: \S+bad\.xml is not SAML SP metadata Gatehouse can use: .+\.\n$/);
    expect(bad.stdout).toBe('');
    ok(await gatehouse(['app', 'delete', 'saml-wiki', '--yes']));
  });

  it('protects hosts (--forward-auth-host) and prints the proxy configuration for them (show --proxy)', async () => {
    const created = JSON.parse(ok(await gatehouse([
      'app', 'create', '--json', '--name', 'Wiki Site', '--audience', 'https://wikisite.example.com', '--redirect-uri', 'https://wikisite.example.com/cb',
      '--forward-auth-host', 'Wiki.LAN.example', '--forward-auth-host', '*.media.lan.example',
    ])));
    expect(created.forwardAuth).toEqual({ hosts: ['wiki.lan.example', '*.media.lan.example'], basic: false });
    expect(ok(await gatehouse(['app', 'show', 'wiki-site']))).toContain('Forward auth:   wiki.lan.example, *.media.lan.example\n');
    // Who passes is the application's group rule (every protocol): --allowed-group, lifted by --no-group-rule.
    expect((await api('POST', '/api/admin/groups', { id: 'wiki-readers', name: 'Wiki readers' })).status).toBe(201);
    expect(ok(await gatehouse(['app', 'update', 'wiki-site', '--allowed-group', 'wiki-readers']))).toBe('Updated application wiki-site: allowedGroups.\n');
    expect(ok(await gatehouse(['app', 'show', 'wiki-site']))).toContain('\nAllowed groups: wiki-readers\n');
    failed(await gatehouse(['app', 'update', 'wiki-site', '--allowed-group', 'wiki-readers', '--no-group-rule']), 'Give --allowed-group or --no-group-rule, not both.');
    expect(ok(await gatehouse(['app', 'update', 'wiki-site', '--no-group-rule']))).toBe('Updated application wiki-site: allowedGroups.\n');
    expect((await api('GET', '/api/admin/applications/wiki-site')).body.allowedGroups).toBeNull();
    expect((await api('DELETE', '/api/admin/groups/wiki-readers')).status).toBe(204);
    const caddy = ok(await gatehouse(['app', 'show', 'wiki-site', '--proxy', 'caddy', '--upstream', 'http://10.0.0.9:8096']));
    const snippet = (await api('GET', '/api/admin/applications/wiki-site/forward-auth/snippet?proxy=caddy&upstream=http://10.0.0.9:8096')).body.snippet;
    expect(caddy).toBe(snippet);
    expect(caddy).toContain('"https://wiki.lan.example" "https://*.media.lan.example" {\n');
    expect(ok(await gatehouse(['app', 'show', 'wiki-site', '--proxy', 'nginx', '--scheme', 'http']))).toContain('    listen 80;\n');
    failed(
      await gatehouse(['app', 'create', '--name', 'Clash', '--audience', 'urn:clash', '--redirect-uri', 'https://clash.example/cb', '--forward-auth-host', 'wiki.lan.example']),
      'The host wiki.lan.example is already protected by another application. (host_in_use)',
    );
    failed(
      await gatehouse(['app', 'create', '--name', 'Bad', '--audience', 'urn:bad', '--redirect-uri', 'https://bad.example/cb', '--forward-auth-host', 'http://x/']),
      'The request is not valid. (validation_failed)',
      '  --forward-auth-host: must be a host name with an optional port (wiki.lan.example, wiki.lan.example:8443), or *. and a host name (*.media.lan.example)',
    );
    failed(await gatehouse(['app', 'show', 'board', '--proxy', 'caddy']), 'The application "board" protects no hosts; set forwardAuth.hosts first. (forward_auth_not_enabled)');
    failed(await gatehouse(['app', 'show', 'wiki-site', '--proxy', 'apache']), 'The request is not valid. (validation_failed)', '  --proxy (caddy|nginx|traefik): is not one of the allowed values');
    failed(await gatehouse(['app', 'show', 'wiki-site', '--upstream', 'http://x']), '--upstream and --scheme go with --proxy.');
    ok(await gatehouse(['app', 'delete', 'wiki-site', '--yes']));
  });

  it('shows and changes the claim settings with app claims (unknown scopes, groups filter, custom claims file, resource servers)', async () => {
    ok(await gatehouse(['app', 'create', '--name', 'Mail', '--audience', 'imap://mail.example.com', '--redirect-uri', 'https://mail.example.com/cb']));
    ok(await gatehouse(['app', 'create', '--name', 'Webmail', '--audience', 'https://webmail.example.com', '--redirect-uri', 'https://webmail.example.com/cb', '--unknown-scopes', 'ignore']));
    expect(ok(await gatehouse(['app', 'claims', 'webmail']))).toBe(
      'Unknown scopes:   ignore\nGroups filter:    (all groups)\nCustom claims:    (none)\nResource servers: (none)\n',
    );
    const file = join(dataDir, 'claims.json');
    writeFileSync(file, JSON.stringify([{ name: 'app_role', source: { type: 'role' }, inAccessToken: true }, { name: 'tier', source: { type: 'constant', value: 'gold' } }]));
    expect(ok(await gatehouse(['app', 'claims', 'webmail', '--custom-claims', file, '--resource-server', 'mail', '--unknown-scopes', 'reject']))).toBe(
      'Unknown scopes:   reject\nGroups filter:    (all groups)\nCustom claims:    app_role (role, access token too), tier (constant)\nResource servers: mail\n',
    );
    expect(JSON.parse(ok(await gatehouse(['app', 'claims', 'webmail', '--json', '--no-resource-servers'])))).toEqual({
      unknownScopes: 'reject', groupsFilter: null, customClaims: [{ name: 'app_role', source: { type: 'role' }, inAccessToken: true }, { name: 'tier', source: { type: 'constant', value: 'gold' } }], resourceServers: [],
    });
    failed(
      await gatehouse(['app', 'claims', 'webmail', '--groups-filter', 'ghosts', '--resource-server', 'nope']),
      'The request is not valid. (validation_failed)',
      '  --groups-filter: there is no group "ghosts"',
      '  --resource-server: there is no application "nope"',
    );
    writeFileSync(file, '[{"name": "sub", "source": {"type": "role"}}]');
    failed(
      await gatehouse(['app', 'claims', 'webmail', '--custom-claims', file]),
      'The request is not valid. (validation_failed)',
      '  --custom-claims: "sub" is a registered claim name that Gatehouse sets itself; choose another name',
    );
    writeFileSync(file, 'not json');
    failed(await gatehouse(['app', 'claims', 'webmail', '--custom-claims', file]), `--custom-claims: ${file} is not JSON (a list of {name, source, inAccessToken?}).`);
    failed(await gatehouse(['app', 'claims', 'webmail', '--all-groups', '--groups-filter', 'x']), 'Give --groups-filter or --all-groups, not both.');
    ok(await gatehouse(['app', 'delete', 'webmail', '--yes']));
    ok(await gatehouse(['app', 'delete', 'mail', '--yes']));
  });

  it('says what is wrong in words, with the problem code, naming the flags', async () => {
    failed(await gatehouse(create), 'An application with id "team-notes" already exists. (application_exists)');
    failed(
      await gatehouse(['app', 'create', '--name', 'Odd', '--type', 'desktop', '--redirect-uri', '']),
      'The request is not valid. (validation_failed)',
      '  --audience: is required',
      '  --redirect-uri: must NOT have fewer than 1 characters',
      '  --type (web|spa|native): is not one of the allowed values',
    );
    failed(await gatehouse(['app', 'create', '--name', '!', '--audience', 'urn:x', '--redirect-uri', 'https://x.example/cb']), 'The name "!" makes no client id; give one with --id.');
    failed(await gatehouse(['app', 'show', 'nope']), 'There is no application with id "nope". (application_not_found)');
    failed(await gatehouse(['app', 'show']), 'Give one application id, e.g. `gatehouse app show notes`. Run with --help for its flags.');
    failed(await gatehouse(['app', 'list', '--colour']), "Unknown option '--colour'. Run `gatehouse app list --help` for its flags.");
    failed(await gatehouse(['app', 'rename', 'x']), 'Unknown command "app rename". Run `gatehouse app --help` for the list.');
    // Nothing was half-written by the refused requests.
    expect((await api('GET', '/api/admin/applications')).body.applications).toHaveLength(3);
  });
});

describe('gatehouse invite and member list', () => {
  it('invites by e-mail, skips those already invited, and lists who joined', async () => {
    const out = ok(await gatehouse(['invite', 'team-notes', 'ann@example.com', 'bob@example.com', '--role', 'admin']));
    const invited = [...out.matchAll(/^Invited (\S+) as (\w+) \(not e-mailed: share the link, until (\S+)\):\n {2}(\S+)$/gm)];
    expect(invited.map((m) => [m[1], m[2]])).toEqual([
      ['ann@example.com', 'admin'],
      ['bob@example.com', 'admin'],
    ]);
    expect(out.trimEnd().split('\n')).toHaveLength(4);
    const annLink = invited[0]![4]!;
    expect(annLink).toMatch(new RegExp(`^${server.url}/invite/ghi_[\\w-]{43}$`));

    const again = JSON.parse(ok(await gatehouse(['invite', 'team-notes', 'bob@example.com', 'cy@example.com', '--json'])));
    expect(again.invitations.map((i: { email: string; role: string }) => [i.email, i.role])).toEqual([['cy@example.com', 'member']]);
    expect(again.skipped).toEqual([{ email: 'bob@example.com', reason: 'already_invited' }]);
    expect(ok(await gatehouse(['invite', 'team-notes', 'bob@example.com']))).toBe(
      'Skipped bob@example.com: already invited (already_invited).\nNo one was invited: every address was skipped.\n',
    );

    // One bad address no longer stops the batch: the valid ones are invited, the others listed (as the panel does).
    const mixed = ok(await gatehouse(['invite', 'team-notes', 'not-an-address', 'dan@example.com', 'bob@example.com', 'eve@@example.com']));
    expect(mixed.replace(/\(not e-mailed.*\n.*\n/, '…\n')).toBe(
      [
        'Invited dan@example.com as member …',
        'Skipped not-an-address: "not-an-address" is not a valid e-mail address (invalid).',
        'Skipped eve@@example.com: "eve@@example.com" is not a valid e-mail address (invalid).',
        'Skipped bob@example.com: already invited (already_invited).',
        '',
      ].join('\n'),
    );
    expect(JSON.parse(ok(await gatehouse(['invite', 'team-notes', 'nope', '--json'])))).toEqual({
      invitations: [],
      skipped: [{ email: 'nope', reason: 'invalid', message: '"nope" is not a valid e-mail address' }],
    });
    // A refusal that is not about an address still stops the command.
    failed(await gatehouse(['invite', 'team-notes', 'fay@example.com', '--role', 'owner']), 'The request is not valid. (validation_failed)', '  --role: is not one of the allowed values');
    expect((await api('GET', '/api/admin/applications/team-notes/invitations')).body.invitations.map((i: { email: string }) => i.email).sort()).toEqual(
      ['ann@example.com', 'bob@example.com', 'cy@example.com', 'dan@example.com'],
    );
    failed(await gatehouse(['invite', 'team-notes']), 'Give the application id and one or more e-mail addresses, e.g. `gatehouse invite notes ann@example.com`. Run with --help for its flags.');

    expect(ok(await gatehouse(['member', 'list', 'team-notes']))).toBe('No members.\n');
    // Ann accepts her invitation by signing up with it.
    const signUp = await fetch(`${server.url}/api/auth/sign-up/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ann@example.com', password: 'correct horse battery', name: 'Ann Example', invitationToken: annLink.split('/').at(-1) }),
    });
    expect(signUp.status).toBe(201);

    const members = ok(await gatehouse(['member', 'list', 'team-notes']));
    const [row] = (await api('GET', '/api/admin/applications/team-notes/users')).body.users;
    // Columns as wide as their widest cell (the two timestamps are 24 characters).
    expect(members).toBe(
      [
        'EMAIL            NAME         ROLE   STATUS  JOINED                    LAST ACTIVE',
        `ann@example.com  Ann Example  admin  active  ${row.joinedAt}  ${row.lastActiveAt}`,
        '',
      ].join('\n'),
    );
    expect(JSON.parse(ok(await gatehouse(['member', 'list', 'team-notes', '--json'])))).toEqual({ users: [row] });
    expect(ok(await gatehouse(['member', 'list', 'team-notes', '--role', 'member']))).toBe('No members.\n');
    expect(JSON.parse(ok(await gatehouse(['member', 'list', 'team-notes', '--search', 'ann', '--json']))).users).toHaveLength(1);
    failed(await gatehouse(['member', 'list', 'team-notes', '--status', 'gone']), 'The request is not valid. (validation_failed)', '  --status: is not one of the allowed values');
  });
});

describe('gatehouse key rotate', () => {
  it('makes the running server publish a new key of every algorithm, which sign after the JWKS cache lifetime', async () => {
    const before = (await api('GET', '/api/admin/keys')).body.keys.filter((k: { status: string }) => k.status === 'active').map((k: { kid: string }) => k.kid);
    expect(before).toHaveLength(3);
    const out = ok(await gatehouse(['key', 'rotate']));
    type Key = { kid: string; alg: string; status: string; activatesAt: string; retiredAt: string; expiresAt: string };
    const keys = (await api('GET', '/api/admin/keys')).body.keys as Key[];
    // By algorithm: each new key before the one it takes over from.
    const next = keys.filter((_, i) => i % 2 === 0);
    const old = keys.filter((_, i) => i % 2 === 1);
    expect(next.map((k) => [k.alg, k.status])).toEqual([['RS256', 'next'], ['ES256', 'next'], ['EdDSA', 'next']]);
    expect(old.map((k) => [k.kid, k.status])).toEqual(before.map((kid: string) => [kid, 'active']));
    expect(out).toBe(
      next.map((k) => `New ${k.alg} signing key ${k.kid} (next): published now, signs from ${k.activatesAt}.\n`).join('') +
        old.map((k) => `Key ${k.kid} (${k.alg}, active) signs until ${k.retiredAt} and stays in the JWKS until ${k.expiresAt}.\n`).join(''),
    );
    const jwks = (await (await fetch(`${server.url}/api/auth/jwks`)).json()) as { keys: { kid: string }[] };
    expect(jwks.keys.map((k) => k.kid)).toEqual(keys.map((k) => k.kid));
    // While those keys wait, another rotation is refused with the server's sentence and code.
    failed(
      await gatehouse(['key', 'rotate', '--json']),
      `Keys ${next.map((k) => k.kid).join(', ')} are published and start signing at ${next[0]!.activatesAt}; rotate again after that. (key_rotation_pending)`,
    );
  });

  it('--saml publishes the SAML identity provider\'s next certificate in the metadata beside the signing one, and shows both', async () => {
    const out = ok(await gatehouse(['key', 'rotate', '--saml']));
    type SamlKey = { id: string; status: string; fingerprint: string; certificate: string; activatesAt: string; retiredAt: string; expiresAt: string };
    const { keys, metadataUrl } = (await api('GET', '/api/admin/saml/keys')).body as { keys: SamlKey[]; metadataUrl: string };
    expect(keys.map((k) => k.status)).toEqual(['next', 'active']);
    const [next, active] = keys as [SamlKey, SamlKey];
    expect(out).toBe(
      `New SAML signing certificate ${next.id} (next, SHA-256 ${next.fingerprint}): in ${metadataUrl} now, signs from ${next.activatesAt}.\n` +
        `Certificate ${active.id} (active, SHA-256 ${active.fingerprint}) signs until ${active.retiredAt} and stays in the metadata until ${active.expiresAt}.\n` +
        'SAML apps that were given the certificate rather than the metadata URL need the new one before it signs.\n',
    );
    // Published before it signs: both certificates are in the metadata.
    const metadata = await (await fetch(`${server.url}/saml/metadata`)).text();
    const published = [...metadata.matchAll(/<ds:X509Certificate>([^<]+)</g)].map((m) => m[1]);
    const body = (pem: string) => pem.replace(/-----[A-Z ]+-----|\s/g, '');
    expect(published.sort()).toEqual([body(next.certificate), body(active.certificate)].sort());
    failed(
      await gatehouse(['key', 'rotate', '--saml', '--json']),
      `SAML signing key ${next.id} is published and starts signing at ${next.activatesAt}; rotate again after that. (key_rotation_pending)`,
    );
  });
});

/** Runs the CLI on a terminal (util-linux `script` gives it a pseudo-terminal) typing `answer`. */
function onTerminal(args: string[], answer: string): RunResult {
  const command = [process.execPath, CLI, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const run = spawnSync('script', ['-qec', command, '/dev/null'], { input: `${answer}\n`, env, encoding: 'utf8', timeout: 60_000 });
  return { code: run.status ?? 1, stdout: run.stdout.replaceAll('\r', ''), stderr: run.stderr };
}

describe('gatehouse app delete', () => {
  it('asks first on a terminal, refuses without one unless --yes, and deletes an application and its members', async () => {
    failed(
      await gatehouse(['app', 'delete', 'team-notes']),
      'gatehouse app delete asks before it deletes, and there is no terminal to ask on: add --yes to delete team-notes.',
    );
    const question = 'Delete application team-notes (Team Notes) with its members, invitations and API keys? This cannot be undone. [y/N] ';
    // The terminal echoes the typed answer wherever it lands among the output; the question and the outcome are what count.
    const declined = onTerminal(['app', 'delete', 'team-notes'], 'n');
    expect([declined.code, declined.stdout.includes(question), declined.stdout.endsWith('Nothing was deleted.\n')], declined.stdout).toEqual([1, true, true]);
    expect((await api('GET', '/api/admin/applications/team-notes')).status).toBe(200);
    const agreed = onTerminal(['app', 'delete', 'team-notes'], 'yes');
    expect([agreed.code, agreed.stdout.includes(question), agreed.stdout.endsWith('Deleted application team-notes, with its members, invitations and API keys.\n')], agreed.stdout)
      .toEqual([0, true, true]);
    expect((await api('GET', '/api/admin/applications/team-notes')).status).toBe(404);
    expect(JSON.parse(ok(await gatehouse(['app', 'delete', 'wiki', '--json', '--yes'])))).toEqual({ id: 'wiki', deleted: true });
    failed(await gatehouse(['app', 'delete', 'team-notes', '-y']), 'There is no application with id "team-notes". (application_not_found)');
    expect(JSON.parse(ok(await gatehouse(['app', 'list', '--json']))).applications.map((a: { id: string }) => a.id)).toEqual(['board']);
  });
});

describe('where the CLI finds the server and its token', () => {
  it('takes the token from --token-file, ADMIN_TOKEN, ADMIN_TOKEN_FILE or the data directory, never --token, and says which it tried', async () => {
    const file = join(tempDir('gatehouse-cli-token-'), 'token');
    writeFileSync(file, `${token}\n`);
    const other = cleanEnv({ GATEHOUSE_URL: server.url, GATEHOUSE_DATA_DIR: tempDir('gatehouse-cli-empty-') });
    expect(JSON.parse(ok(await runCli(['app', 'list', '--json', '--token-file', file], other))).applications).toHaveLength(1);
    expect(JSON.parse(ok(await runCli(['app', 'list', '--json'], { ...other, ADMIN_TOKEN: token }))).applications).toHaveLength(1);
    // ADMIN_TOKEN_FILE, as the PostgreSQL guide sets it for the service and the operator's shell.
    expect(JSON.parse(ok(await runCli(['app', 'list', '--json'], { ...other, ADMIN_TOKEN_FILE: file }))).applications).toHaveLength(1);
    expect(JSON.parse(ok(await runCli(['member', 'list', 'board', '--json'], { ...other, ADMIN_TOKEN_FILE: file }))).users).toEqual([]);

    // The token itself on the command line is refused (ps shows it to every user), by every admin command.
    for (const args of [['app', 'list'], ['member', 'list', 'board'], ['invite', 'board', 'x@example.com'], ['key', 'rotate'], ['tls', 'renew-ca'], ['app', 'delete', 'board', '--yes']]) {
      failed(
        await runCli([...args, '--token', token], other),
        '--token would show the admin token to every user of this machine (ps); use --token-file FILE, ADMIN_TOKEN or ADMIN_TOKEN_FILE.',
      );
    }
    expect((await api('GET', '/api/admin/applications/board')).status).toBe(200);

    const emptyDir = other.GATEHOUSE_DATA_DIR!;
    failed(
      await runCli(['app', 'list'], other),
      `There is no admin token at ${join(emptyDir, 'admin-token')} (ADMIN_TOKEN and ADMIN_TOKEN_FILE are not set; start the server once with this data directory, or set ADMIN_TOKEN_FILE, or give --token-file).`,
    );
    failed(await runCli(['app', 'list'], { ...other, ADMIN_TOKEN_FILE: join(emptyDir, 'nope') }), `ADMIN_TOKEN_FILE names ${join(emptyDir, 'nope')}, which does not exist.`);
    failed(
      await runCli(['app', 'list'], { ...other, ADMIN_TOKEN: 'gha_not-the-token-at-all' }),
      'The server refused ADMIN_TOKEN. The bearer token is not a valid admin token or API key. (unauthorized)',
    );
    const wrongFile = join(emptyDir, 'wrong-token');
    writeFileSync(wrongFile, 'gha_not-the-token-at-all\n');
    failed(
      await runCli(['app', 'list'], { ...other, ADMIN_TOKEN_FILE: wrongFile }),
      `The server refused the token in ${wrongFile} (ADMIN_TOKEN_FILE). The bearer token is not a valid admin token or API key. (unauthorized)`,
    );
  });

  it('tls renew-ca says so on a server without a local CA', async () => {
    failed(await gatehouse(['tls', 'renew-ca']), 'This server has no local certificate authority (GATEHOUSE_TLS is not auto). (tls_not_local)');
  });

  it('says so when no server answers, and takes --url over GATEHOUSE_URL', async () => {
    failed(
      await gatehouse(['app', 'list', '--url', 'http://127.0.0.1:1']),
      'Nothing answers at http://127.0.0.1:1: is the server running? Start it with `gatehouse serve`, or point at it with --url or GATEHOUSE_URL.',
    );
    failed(await gatehouse(['app', 'list', '--url', 'ftp://127.0.0.1']), 'The server URL "ftp://127.0.0.1" is not an http(s) URL.');
    // Without --url or GATEHOUSE_URL: where `gatehouse serve` would listen with this environment.
    const port = new URL(server.url).port;
    const viaEnv = cleanEnv({ GATEHOUSE_DATA_DIR: dataDir, PORT: port });
    expect(JSON.parse(ok(await runCli(['app', 'list', '--json'], viaEnv))).applications).toHaveLength(1);
  });

  it('reaches a LAN TLS server, trusting the data directory\'s own CA', async () => {
    const lanDir = tempDir('gatehouse-cli-lan-');
    const lan = await startServer(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', lanDir, '--tls', 'auto'], cleanEnv());
    try {
      expect(lan.url).toMatch(/^https:/);
      const lanEnv = cleanEnv({ GATEHOUSE_DATA_DIR: lanDir, GATEHOUSE_URL: lan.url });
      expect(ok(await runCli(['app', 'list'], lanEnv))).toBe('No applications yet. Create one with `gatehouse app create`.\n');
      // `tls renew-ca`: a new local CA, served at once (the CLI's next call trusts it from the data directory).
      const renewed = ok(await runCli(['tls', 'renew-ca'], lanEnv)).split('\n');
      expect(renewed[0]).toBe('Renewed the local CA; the server already serves a certificate from it.');
      expect(renewed[1]).toMatch(/^SHA-256: {5}([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
      expect(renewed[2]).toMatch(/^Expires: {5}\d{4}-\d\d-\d\dT/);
      expect(renewed[3]).toMatch(/^Vouches for: localhost, /);
      expect(renewed[4]).toBe(`Download:    ${lan.url}/ca.pem`);
      expect(renewed.at(-2)).toBe('Install the new CA on every device (compare the fingerprint), then remove the old one: until then they do not trust this server.');
      const json = JSON.parse(ok(await runCli(['tls', 'renew-ca', '--json'], lanEnv)));
      expect(json.ca.fingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
      expect(json.ca.fingerprint).not.toBe(renewed[1]!.slice(13));
      expect(json.mode).toBe('auto');
      // Another data directory has no such CA: the certificate is not trusted, in words.
      const stranger = cleanEnv({ GATEHOUSE_DATA_DIR: tempDir('gatehouse-cli-stranger-'), GATEHOUSE_URL: lan.url, ADMIN_TOKEN: 'gha_whatever-whatever' });
      const refused = await runCli(['app', 'list'], stranger);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^The certificate of the Gatehouse server at https:\/\/127\.0\.0\.1:\d+ is not trusted \(\w+\); with LAN TLS, run this on the server's machine with its --data-dir\.\n$/);
    } finally {
      await lan.stop();
    }
  });
});

describe('gatehouse --help', () => {
  it('lists the admin commands, and each group and command has its help', async () => {
    const top = ok(await gatehouse(['--help']));
    // One column for the summaries: two spaces after the longest name (`directory sync`, 14).
    for (const [name, summary] of [
      ['app list', 'list the applications'],
      ['app create', 'register an application, or one from an app preset with --preset (prints its client secret once)'],
      ['preset list', 'list the app presets and whether each is tested here or checked against its documentation'],
      ['invite', 'invite people to an application by e-mail'],
      ['member list', "list an application's members"],
      ['config export', 'print the configuration as one YAML document (--out FILE to write it)'],
      ['key rotate', 'publish new signing keys on the running server (they sign two minutes later)'],
    ]) {
      expect(top).toContain(`  ${name!.padEnd(16)}${summary}\n`);
    }
    const group = await gatehouse(['app']);
    expect(group.code).toBe(1);
    expect(group.stdout).toMatch(/^Usage: gatehouse app <command> \[flags\]\n\nCommands:\n {2}app list {6}list the applications\n/);
    const createHelp = ok(await gatehouse(['app', 'create', '--help']));
    for (const flag of ['--name NAME', '--type web|spa|native', '--redirect-uri URI', '--audience AUD', '--id ID', '--url URL', '--token-file FILE', '--json', '--data-dir DIR']) {
      expect(createHelp).toContain(`  ${flag} `);
    }
    expect(createHelp).not.toContain('--token TOKEN');
    expect(ok(await gatehouse(['invite', '--help']))).toMatch(/^Usage: gatehouse invite APP EMAIL\.\.\. \[flags\]\n/);
  });
});

describe('gatehouse group', () => {
  /** Signs a person up to an open application on the server (the admin API creates no people). */
  async function person(email: string) {
    const res = await fetch(`${server.url}/api/auth/sign-up/email`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'correct horse battery', name: email.split('@')[0], applicationId: 'club' }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { user: { id: string } }).user.id;
  }

  it('creates, lists, shows and deletes groups, and puts people in and out by e-mail; errors in words with the code', async () => {
    const club = await api('POST', '/api/admin/applications', { id: 'club', name: 'Club', audience: 'https://club.example.com', redirectUris: ['https://club.example.com/cb'], clientType: 'spa', authPolicy: { signup_policy: 'open' } });
    expect(club.status, JSON.stringify(club.body)).toBe(201);
    const gina = await person('gina@example.org');
    const hal = await person('hal@example.org');

    expect(ok(await gatehouse(['group', 'create', 'family', '--name', 'Family', '--description', 'Who lives here']))).toBe('Created group family (Family).\n');
    expect(JSON.parse(ok(await gatehouse(['group', 'create', 'media-users', '--json'])))).toMatchObject({ id: 'media-users', name: 'media-users', description: null });
    failed(await gatehouse(['group', 'create', 'family']), 'A group with id "family" already exists. (group_exists)');
    failed(
      await gatehouse(['group', 'create', 'Family']),
      'The request is not valid. (validation_failed)',
      '  id: must match pattern "^[a-z0-9][a-z0-9._-]{0,63}$"',
    );
    failed(await gatehouse(['group', 'create']), "Give the new group's id, e.g. `gatehouse group create media-users --name \"Media users\"`. Run with --help for its flags.");

    expect(ok(await gatehouse(['group', 'list']))).toBe(['ID           NAME         DESCRIPTION', 'family       Family       Who lives here', 'media-users  media-users', ''].join('\n'));
    expect(ok(await gatehouse(['group', 'list', '--query', 'med']))).toBe(['ID           NAME         DESCRIPTION', 'media-users  media-users', ''].join('\n'));
    expect(JSON.parse(ok(await gatehouse(['group', 'list', '--json']))).groups.map((g: { id: string }) => g.id)).toEqual(['family', 'media-users']);

    expect(ok(await gatehouse(['group', 'add', 'family', 'Gina@example.org', 'hal@example.org']))).toBe('gina@example.org is in family.\nhal@example.org is in family.\n');
    // Idempotent, like the API.
    expect(ok(await gatehouse(['group', 'add', 'family', 'gina@example.org']))).toBe('gina@example.org is in family.\n');
    failed(await gatehouse(['group', 'add', 'family', 'nobody@example.org']), 'Nobody has the e-mail address nobody@example.org (person_not_found).');
    failed(await gatehouse(['group', 'add', 'nope', 'gina@example.org']), 'There is no group with id "nope". (group_not_found)');
    failed(await gatehouse(['group', 'add', 'family']), 'Give a group id and one or more e-mail addresses, e.g. `gatehouse group add family ann@example.com`. Run with --help for its flags.');

    const shown = ok(await gatehouse(['group', 'show', 'family'])).split('\n');
    expect(shown.slice(0, 4)).toEqual(['ID:          family', 'Name:        Family', 'Description: Who lives here', 'Members:     2']);
    expect(shown[6]).toBe('');
    expect(shown[7]).toBe('E-MAIL            USERNAME  NAME  ADDED');
    expect(shown[8]).toMatch(/^gina@example\.org  gina      gina  \d{4}-\d\d-\d\dT/);
    const json = JSON.parse(ok(await gatehouse(['group', 'show', 'family', '--json'])));
    expect(json.members.map((m: { id: string; username: string }) => [m.id, m.username])).toEqual([[gina, 'gina'], [hal, 'hal']]);

    expect(JSON.parse(ok(await gatehouse(['group', 'remove', 'family', 'hal@example.org', '--json'])))).toEqual({ group: 'family', removed: [{ id: hal, email: 'hal@example.org' }] });
    expect(ok(await gatehouse(['group', 'remove', 'family', 'hal@example.org']))).toBe('hal@example.org is not in family.\n');
    expect((await api('GET', '/api/admin/groups/family/members')).body.members.map((m: { id: string }) => m.id)).toEqual([gina]);

    failed(await gatehouse(['group', 'delete', 'family']), 'gatehouse group delete asks before it deletes, and there is no terminal to ask on: add --yes to delete family.');
    expect(ok(await gatehouse(['group', 'delete', 'family', '--yes']))).toBe('Deleted group family.\n');
    failed(await gatehouse(['group', 'show', 'family']), 'There is no group with id "family". (group_not_found)');
    expect(JSON.parse(ok(await gatehouse(['group', 'delete', 'media-users', '-y', '--json'])))).toEqual({ id: 'media-users', deleted: true });
    expect(ok(await gatehouse(['group', 'list']))).toBe('No groups yet. Create one with `gatehouse group create ID --name NAME`.\n');
    // The audit log names the administrator's token behind each change.
    const audit = (await api('GET', '/api/admin/audit-log?limit=200')).body.entries.map((e: { action: string }) => e.action);
    expect(audit.filter((a: string) => a.startsWith('group.'))).toEqual(expect.arrayContaining(['group.created', 'group.member_added', 'group.member_removed', 'group.deleted']));
  });
});
