/**
 * `gatehouse app list | create | show | update | claims | delete | ldap`: applications through the
 * running server's admin API (DESIGN §4.3). A client secret is printed once, by `create` (or by
 * `update` when a public client becomes a web one); `list` and `show` never have one. `claims`
 * shows and changes the claim settings (spec claims-and-groups.md). `app ldap` turns an
 * application's LDAP directory access on or off and makes its service account a new password
 * (spec ldap.md), printed once. `--allowed-group` restricts the application to directory groups
 * (its group rule, every protocol; `--no-group-rule` lifts it on update). `--forward-auth-host`
 * protects sites behind a reverse proxy, and
 * `show --proxy caddy|nginx|traefik` prints the proxy's configuration for them (spec
 * forward-auth.md; docs/protect-apps-without-oidc.md).
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from '../../config.js';
import { adminCommand, applicationPath, listAll } from '../admin-client.js';
import { bodyFromFlags, type FlagTable } from '../flags.js';
import { formatFields, formatTable, printJson } from '../output.js';
import { idFromName } from '../../applications/id-from-name.js';
import { confirmDelete } from '../confirm.js';
import { printSetup, type Setup } from './presets.js';
import { readSpMetadata } from '../../saml/sp-metadata.js';
import type { FieldError } from '../../http/problem.js';

interface Application {
  id: string;
  name: string;
  audience: string;
  redirectUris: string[];
  clientType: string;
  webhookUrl: string | null;
  webhookSecretSet: boolean;
  ssoGroupId: string | null;
  authPolicy: { signup_policy: string; allowed_providers: string[]; profile_fields: { key: string }[] };
  allowedGroups: string[] | null;
  grantTypes: string[];
  backchannelLogoutUri: string | null;
  unknownScopes: string;
  groupsFilter: string[] | null;
  customClaims: { name: string; source: { type: string }; inAccessToken?: boolean }[];
  resourceServers: string[];
  signingAlg: string;
  createdAt: string;
  updatedAt: string;
  ldap: { enabled: boolean; bindDn: string };
  forwardAuth: { hosts: string[]; basic: boolean } | null;
  clientSecret?: string;
  webhookSecret?: string;
  ldapPassword?: string;
}

const onePositional = { usage: 'APP', min: 1, max: 1, missing: "Give one application id, e.g. `gatehouse app show notes`." };


export const appList = adminCommand({
  async run({ client, json }) {
    const applications = await listAll<Application>(client, '/api/admin/applications', 'applications');
    if (json) return printJson({ applications });
    if (applications.length === 0) return console.log('No applications yet. Create one with `gatehouse app create`.');
    console.log(
      formatTable(
        ['ID', 'NAME', 'TYPE', 'AUDIENCE', 'REDIRECT URIS'],
        applications.map((a) => [a.id, a.name, a.clientType, a.audience, a.redirectUris.join(' ')]),
      ),
    );
  },
});

/** The claim settings' flags, shared by `app create` and `app claims`. */
const claimFlags: FlagTable = {
  'unknown-scopes': {
    type: 'string', value: 'reject|ignore', field: 'unknownScopes',
    help: 'a scope Gatehouse does not know: reject (invalid_scope, the default) or ignore (dropped from the grant)',
  },
  'groups-filter': { type: 'string', multiple: true, value: 'GROUP', field: 'groupsFilter', help: 'a group the groups claim may show; repeat for more (default: all of the person\'s groups)' },
  'custom-claims': { type: 'string', value: 'FILE', field: 'customClaims', help: 'a JSON file with the custom claims list ([{name, source, inAccessToken?}], see docs/claims-and-scopes.md)' },
  'resource-server': { type: 'string', multiple: true, value: 'APP', field: 'resourceServers', help: 'another (web) application that may introspect this one\'s tokens; repeat for more' },
};

/** The claim settings of a body built from flags: the custom claims file read and parsed. */
function withClaimFiles(body: Record<string, unknown>): Record<string, unknown> {
  if (typeof body.customClaims !== 'string') return body;
  const file = body.customClaims;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`--custom-claims: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
  try {
    return { ...body, customClaims: JSON.parse(text) as unknown };
  } catch {
    throw new ConfigError(`--custom-claims: ${file} is not JSON (a list of {name, source, inAccessToken?}).`);
  }
}

/**
 * `--saml-metadata FILE`: the SAML service provider's metadata read here, as the admin API's import
 * reads it (saml/sp-metadata.ts), into the body's `saml` (entityId, acs, slo, spCertificates), so
 * the application is made or changed in one request, or not at all.
 */
function withSamlMetadata(body: Record<string, unknown>): Record<string, unknown> {
  if (typeof body.saml !== 'string') return body;
  const file = body.saml;
  let xml: string;
  try {
    xml = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`--saml-metadata: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
  const errors: FieldError[] = [];
  const read = readSpMetadata(xml, 'saml-metadata', errors);
  if (!read) throw new ConfigError(`--saml-metadata: ${file} is not SAML SP metadata Gatehouse can use: ${errors.map((e) => e.message).join('; ')}.`);
  return { ...body, saml: read };
}

/** `app create` flags; each row with a `field` sets that property of the request body. */
const createFlags: FlagTable = {
  name: { type: 'string', value: 'NAME', help: 'display name (required)', field: 'name' },
  type: { type: 'string', value: 'web|spa|native', help: 'web: confidential, gets a client secret (the default); spa, native: public, PKCE', field: 'clientType' },
  'redirect-uri': { type: 'string', multiple: true, value: 'URI', help: 'where sign-in returns; repeat for more (at least one)', field: 'redirectUris' },
  audience: { type: 'string', value: 'AUD', help: 'the API audience its access tokens carry (required, unique)', field: 'audience' },
  id: { type: 'string', value: 'ID', help: 'client id (default: made from the name, "Team Notes" → team-notes)', field: 'id' },
  'allowed-group': {
    type: 'string', multiple: true, value: 'GROUP', field: 'allowedGroups',
    help: 'only members of this directory group may use it, by every protocol (OIDC, forward auth, LDAP, …); repeat for more (any of them)',
  },
  'grant-type': {
    type: 'string', multiple: true, value: 'GRANT', field: 'grantTypes',
    help: 'authorization_code, refresh_token, client_credentials (web only) or device_code; repeat for more (default: the first two)',
  },
  'backchannel-logout-uri': {
    type: 'string', value: 'URI', field: 'backchannelLogoutUri',
    help: 'where Gatehouse POSTs logout tokens when a sign-in ends (https, or http on this network)',
  },
  ...claimFlags,
  'signing-alg': {
    type: 'string', value: 'RS256|ES256|EdDSA', field: 'signingAlg',
    help: 'how its ID, access and logout tokens are signed (default RS256, which every OIDC library accepts; see docs/signing-algorithms.md)',
  },
  ldap: { type: 'boolean', help: 'let LDAP clients read its members and groups (prints the service account\'s password once)', field: 'ldap' },
  'forward-auth-host': {
    type: 'string', multiple: true, value: 'HOST', field: 'forwardAuth',
    help: 'a host it protects behind a reverse proxy (wiki.lan.example, wiki.lan.example:8443, *.media.lan.example); repeat for more',
  },
  'saml-metadata': {
    type: 'string', value: 'FILE', field: 'saml',
    help: 'make it a SAML service provider from its metadata XML (entity ID, ACS, SLO, certificates; see docs/saml.md)',
  },
};

/**
 * `app update` flags: those of `create` but the client id, which never changes, and LDAP (`app ldap`
 * turns it on and off); and `--no-group-rule`, which lifts the group rule.
 */
const { id: _id, ldap: _ldap, ...updateFlags } = {
  ...createFlags,
  'no-group-rule': { type: 'boolean', help: 'no group rule any more: everyone the sign-up policy admits may use it (clears --allowed-group)' },
} as FlagTable;

/** `device_code` on the command line is RFC 8628's grant, whose wire name is a URN. */
const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const grantName = (grant: string) => (grant === DEVICE_CODE_GRANT ? 'device_code' : grant);

/** The request body of `create`/`update` flags, grant names in their wire form. */
function applicationBody(table: FlagTable, values: Record<string, unknown>): Record<string, unknown> {
  const body = bodyFromFlags(table, values as Parameters<typeof bodyFromFlags>[1]);
  if (Array.isArray(body.grantTypes)) body.grantTypes = body.grantTypes.map((g: string) => (g === 'device_code' ? DEVICE_CODE_GRANT : g));
  if (body.ldap !== undefined) body.ldap = { enabled: body.ldap === true };
  if (Array.isArray(body.forwardAuth)) body.forwardAuth = { hosts: body.forwardAuth };
  if (values['no-group-rule']) {
    if (body.allowedGroups !== undefined) throw new ConfigError('Give --allowed-group or --no-group-rule, not both.');
    body.allowedGroups = null;
  }
  return body;
}

/** `app create --preset`: the preset and its inputs (spec presets-and-operations.md, "App presets"). */
const presetFlags: FlagTable = {
  preset: { type: 'string', value: 'PRESET', help: 'create it from an app preset (`gatehouse preset list`); its settings come from the preset and its inputs' },
  'base-url': { type: 'string', value: 'URL', help: 'with --preset: the app\'s address (the preset input baseUrl)' },
  input: { type: 'string', multiple: true, value: 'KEY=VALUE', help: 'with --preset: another input of the preset (`gatehouse preset show PRESET` lists them); repeat for more' },
};

/** The preset request body of `app create --preset`; the application's own settings come from the preset, so their flags are refused. */
function presetBody(values: Record<string, unknown>): Record<string, unknown> {
  const own = Object.keys(createFlags).filter((name) => name !== 'id' && name !== 'name' && values[name] !== undefined);
  if (own.length) {
    throw new ConfigError(`--preset sets the application's settings; leave out --${own.join(', --')} (change them afterwards with \`gatehouse app update\`).`);
  }
  const presetInputs: Record<string, string> = {};
  if (typeof values['base-url'] === 'string') presetInputs.baseUrl = values['base-url'];
  for (const pair of (values.input as string[] | undefined) ?? []) {
    const at = pair.indexOf('=');
    if (at < 1) throw new ConfigError(`--input takes KEY=VALUE, got "${pair}".`);
    // Keys as the preset names them (adminGroup), or in the command line's spelling (admin-group).
    const key = pair.slice(0, at).replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
    presetInputs[key] = pair.slice(at + 1);
  }
  return {
    preset: values.preset,
    presetInputs,
    ...(typeof values.id === 'string' ? { id: values.id } : {}),
    ...(typeof values.name === 'string' ? { name: values.name } : {}),
  };
}

export const appCreate = adminCommand({
  flags: { ...createFlags, ...presetFlags },
  async run({ client, values, json }) {
    if (values.preset !== undefined) {
      const created = await client.request<Application>('POST', '/api/admin/applications', presetBody(values));
      if (json) return printJson(created);
      console.log(`Created application ${created.id} (${created.name}) from the ${values.preset} preset.`);
      printShownOnce(created, [['Client ID', created.id], ['Redirect URIs', created.redirectUris]]);
      // What to configure in the app, with the secret just shown in place of its placeholder (m1).
      console.log('\nWhat to configure in the app:');
      printSetup(await client.request<Setup>('GET', `${applicationPath(created.id)}/setup`), created);
      console.log(`\nLater: \`gatehouse app setup ${created.id}\` prints it again, with the secret as a placeholder.`);
      return;
    }
    if (values['base-url'] !== undefined || values.input !== undefined) throw new ConfigError('--base-url and --input are the inputs of a preset: give --preset too.');
    const body = withSamlMetadata(withClaimFiles(applicationBody(createFlags, values)));
    if (body.id === undefined && typeof body.name === 'string') {
      body.id = idFromName(body.name);
      if ((body.id as string).length < 2) throw new ConfigError(`The name "${body.name}" makes no client id; give one with --id.`);
    }
    const created = await client.request<Application>('POST', '/api/admin/applications', body);
    if (json) return printJson(created);
    console.log(`Created application ${created.id} (${created.name}, ${created.clientType}).`);
    printShownOnce(created, [['Client ID', created.id]]);
  },
});

/**
 * `app show` flags: `--proxy` prints the proxy configuration for the application's protected hosts
 * instead. Their `field` is the snippet query's parameter, so a refusal names the flag.
 */
const showFlags: FlagTable = {
  proxy: { type: 'string', value: 'caddy|nginx|traefik', field: 'proxy', help: 'print the reverse proxy\'s configuration for the hosts it protects (forward auth)' },
  upstream: { type: 'string', value: 'URL', field: 'upstream', help: "with --proxy: where the application itself listens (default: its preset's, else http://127.0.0.1:8080)" },
  scheme: { type: 'string', value: 'https|http', field: 'scheme', help: "with --proxy: how its hosts are served (default: as its preset's address, else https)" },
};

const forwardAuthText = (f: Application['forwardAuth']) => (f ? `${f.hosts.join(', ')}${f.basic ? ', HTTP Basic with app passwords' : ''}` : '(none)');

/** `fields`, then the secrets an answer shows only once (a new client, webhook or LDAP secret), with a word on keeping them. */
function printShownOnce(app: Application, fields: [string, string | string[]][]): void {
  if (app.clientSecret) fields.push(['Client secret', app.clientSecret]);
  if (app.webhookSecret) fields.push(['Webhook secret', app.webhookSecret]);
  if (app.ldapPassword) fields.push(['LDAP bind DN', app.ldap.bindDn], ['LDAP password', app.ldapPassword]);
  if (fields.length) console.log(formatFields(fields));
  if (app.clientSecret) console.log('Store the client secret now: it is shown only this once (rotate it in the panel if lost).');
  if (app.ldapPassword) console.log('Store the LDAP password now: it is shown only this once (`gatehouse app ldap ID new-password` makes another).');
}

export const appShow = adminCommand({
  flags: showFlags,
  positionals: onePositional,
  async run({ client, positionals, values, json }) {
    if (values.proxy !== undefined) {
      const query = new URLSearchParams(bodyFromFlags(showFlags, values) as Record<string, string>);
      const answer = await client.request<{ proxy: string; hosts: string[]; snippet: string }>('GET', `${applicationPath(positionals[0]!)}/forward-auth/snippet?${query}`);
      if (json) return printJson(answer);
      return void process.stdout.write(answer.snippet);
    }
    if (values.upstream !== undefined || values.scheme !== undefined) throw new ConfigError('--upstream and --scheme go with --proxy.');
    const app = await client.request<Application>('GET', applicationPath(positionals[0]!));
    if (json) return printJson(app);
    console.log(
      formatFields([
        ['ID', app.id],
        ['Name', app.name],
        ['Type', app.clientType],
        ['Audience', app.audience],
        ['Redirect URIs', app.redirectUris],
        ['Sign-up', app.authPolicy.signup_policy],
        ['Allowed groups', app.allowedGroups ? app.allowedGroups.join(', ') : '(no group rule)'],
        ['Providers', app.authPolicy.allowed_providers.join(', ')],
        ['Profile fields', app.authPolicy.profile_fields.map((f) => f.key).join(', ') || '(none)'],
        ['Webhook', app.webhookUrl ? `${app.webhookUrl}${app.webhookSecretSet ? ' (signed)' : ''}` : '(none)'],
        ['Grant types', app.grantTypes.map(grantName).join(', ')],
        ['Logout URI', app.backchannelLogoutUri ?? '(none)'],
        ['Token signing', app.signingAlg],
        ['Shared sign-in', app.ssoGroupId ?? '(none)'],
        ['LDAP', app.ldap.enabled ? `on, bind DN ${app.ldap.bindDn}` : 'off'],
        ['Forward auth', forwardAuthText(app.forwardAuth)],
        ['Created', app.createdAt],
        ['Updated', app.updatedAt],
      ]),
    );
  },
});

/** The claim settings as `claims` prints them (`show` leaves them to it). */
function claimFields(app: Application): [string, string][] {
  return [
    ['Unknown scopes', app.unknownScopes],
    ['Groups filter', app.groupsFilter === null ? '(all groups)' : app.groupsFilter.join(', ') || '(none)'],
    ['Custom claims', app.customClaims.map((c) => `${c.name} (${c.source.type}${c.inAccessToken ? ', access token too' : ''})`).join(', ') || '(none)'],
    ['Resource servers', app.resourceServers.join(', ') || '(none)'],
  ];
}

const claimsFlags: FlagTable = {
  ...claimFlags,
  'all-groups': { type: 'boolean', help: 'the groups claim shows all of the person\'s groups again (clears --groups-filter)' },
  'no-resource-servers': { type: 'boolean', help: 'no other application may introspect this one\'s tokens' },
};

/** `app claims APP [flags]`: shows the claim settings; with flags, changes them first. */
export const appClaims = adminCommand({
  flags: claimsFlags,
  positionals: { ...onePositional, missing: 'Give one application id, e.g. `gatehouse app claims notes --unknown-scopes ignore`.' },
  async run({ client, positionals, values, json }) {
    const path = applicationPath(positionals[0]!);
    const body = withClaimFiles(bodyFromFlags(claimsFlags, values));
    if (values['all-groups']) {
      if (body.groupsFilter !== undefined) throw new ConfigError('Give --groups-filter or --all-groups, not both.');
      body.groupsFilter = null;
    }
    if (values['no-resource-servers']) {
      if (body.resourceServers !== undefined) throw new ConfigError('Give --resource-server or --no-resource-servers, not both.');
      body.resourceServers = [];
    }
    const app = Object.keys(body).length ? await client.request<Application>('PATCH', path, body) : await client.request<Application>('GET', path);
    if (json) return printJson({ unknownScopes: app.unknownScopes, groupsFilter: app.groupsFilter, customClaims: app.customClaims, resourceServers: app.resourceServers });
    console.log(formatFields(claimFields(app)));
  },
});

export const appUpdate = adminCommand({
  flags: updateFlags,
  positionals: { ...onePositional, missing: 'Give one application id, e.g. `gatehouse app update notes --signing-alg ES256`.' },
  async run({ client, positionals, values, json }) {
    const body = withSamlMetadata(withClaimFiles(applicationBody(updateFlags, values)));
    if (Object.keys(body).length === 0) throw new ConfigError('Give at least one setting to change, e.g. --signing-alg ES256 (see `gatehouse app update --help`).');
    const updated = await client.request<Application>('PATCH', applicationPath(positionals[0]!), body);
    if (json) return printJson(updated);
    console.log(`Updated application ${updated.id}: ${Object.keys(body).join(', ')}.`);
    if (body.signingAlg !== undefined) console.log(`Tokens issued from now on are signed with ${updated.signingAlg}; tokens issued before still verify.`);
    printShownOnce(updated, []);
  },
});

const deleteFlags: FlagTable = {
  yes: { type: 'boolean', short: 'y', help: 'delete without asking (needed when there is no terminal to ask on)' },
};

export const appDelete = adminCommand({
  flags: deleteFlags,
  positionals: { ...onePositional, missing: 'Give one application id, e.g. `gatehouse app delete notes`.' },
  async run({ client, values, positionals, json }) {
    const id = positionals[0]!;
    // Deleting is not undone: ask, or refuse where nobody can answer (a script, a pipe).
    await confirmDelete(values.yes === true, 'app delete', id, async () => {
      const app = await client.request<Application>('GET', applicationPath(id));
      return `Delete application ${app.id} (${app.name}) with its members, invitations and API keys? This cannot be undone. [y/N] `;
    });
    await client.request('DELETE', applicationPath(id));
    if (json) return printJson({ id, deleted: true });
    console.log(`Deleted application ${id}, with its members, invitations and API keys.`);
  },
});

const LDAP_ACTIONS = ['on', 'off', 'new-password'];

/**
 * `gatehouse app ldap APP [on|off|new-password]`: without an action, whether LDAP is on and the bind
 * DN; `on` prints the service account's new password once, `off` removes it, `new-password` makes
 * another (the old one stops binding at once).
 */
export const appLdap = adminCommand({
  positionals: { usage: 'APP [on|off|new-password]', min: 1, max: 2, missing: 'Give an application id, e.g. `gatehouse app ldap media on`.' },
  async run({ client, positionals, json }) {
    const [id, action] = positionals as [string, string | undefined];
    if (action !== undefined && !LDAP_ACTIONS.includes(action)) {
      throw new ConfigError(`Unknown action "${action}": use on, off or new-password (or nothing, to show the setting).`);
    }
    let bindDn: string;
    let password: string | undefined;
    let enabled: boolean;
    if (action === 'new-password') {
      const rotated = await client.request<{ bindDn: string; password: string }>('POST', `${applicationPath(id)}/ldap/password`);
      ({ bindDn, password } = rotated);
      enabled = true;
    } else {
      const app = action === undefined
        ? await client.request<Application>('GET', applicationPath(id))
        : await client.request<Application>('PATCH', applicationPath(id), { ldap: { enabled: action === 'on' } });
      ({ enabled, bindDn } = app.ldap);
      password = app.ldapPassword;
    }
    if (json) return printJson({ id, enabled, bindDn, ...(password ? { password } : {}) });
    console.log(formatFields([
      ['LDAP', enabled ? 'on' : 'off'],
      ...(enabled ? [['Bind DN', bindDn] as [string, string]] : []),
      ...(password ? [['Password', password] as [string, string]] : []),
    ]));
    if (password) console.log('Store the password now: it is shown only this once.');
    else if (action === 'on') console.log('LDAP was already on; `gatehouse app ldap ' + id + ' new-password` makes a new password.');
  },
});
