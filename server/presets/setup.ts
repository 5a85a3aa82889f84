/**
 * `GET /api/admin/applications/:id/setup` (spec presets-and-operations.md): what to type into the
 * app, a configuration file or environment block where it has one, and, with LAN TLS on, how it
 * trusts the appliance's CA. Secrets appear only as placeholders (build.ts PLACEHOLDERS): the
 * client secret was shown once and only its hash is kept. An application made without a preset
 * gets the generic OpenID Connect settings (docs/integrations/oidc.md).
 */
import { hasLocalCa, type Config } from '../config.js';
import type { SetupTrust, TrustRuntime } from '../http/lan-trust-wire.js';
import type { Application } from '../db/schema.js';
import { discoveryDocument } from '../oauth/discovery.js';
import { baseDn, groupsDn, peopleDn, applicationBindDn } from '../ldap/tree.js';
import { snippet, snippetDefaults } from '../forward-auth/snippets.js';
import { PLACEHOLDERS, PLACEHOLDER_NOTE, TEST_SIGN_IN_NOTE, caTrust } from './build.js';
import { findPreset } from './catalogue/index.js';
import type { Setup, SetupContext } from './types.js';

/** Everything a preset's set-up text may use, for this application on this server. */
export function setupContext(config: Config, app: Application, trust: SetupTrust | null = null): SetupContext {
  const issuer = config.issuer.replace(/\/$/, '');
  const discovery = discoveryDocument(issuer);
  return {
    issuer,
    discoveryUrl: `${issuer}/.well-known/openid-configuration`,
    endpoints: {
      authorization: discovery.authorization_endpoint,
      token: discovery.token_endpoint,
      userinfo: discovery.userinfo_endpoint,
      jwks: discovery.jwks_uri,
      endSession: discovery.end_session_endpoint,
      introspection: discovery.introspection_endpoint,
    },
    app: { id: app.id, name: app.name, audience: app.audience, redirectUris: app.redirectUris, clientType: app.clientType },
    inputs: app.preset?.inputs ?? {},
    // The CA to download, as the trust lines name it: none without a local-CA certificate serving.
    lanCa: trust ? { url: trust.caUrl } : null,
    trust,
    ldap: ldapContext(config, app),
    radius: config.radius.enabled ? { host: new URL(config.issuer).hostname, port: config.radius.port, acctPort: config.radius.acctPort } : null,
    proxySnippets: proxySnippets(config, app),
  };
}

/**
 * The proxy configurations for an application that protects hosts: the ones the forward-auth tab
 * prints (forward-auth/snippets.ts), in front of the preset's `upstream` input and served the way
 * its `baseUrl` is (http or https).
 */
function proxySnippets(config: Config, app: Application): SetupContext['proxySnippets'] {
  if (!app.forwardAuth) return null;
  const options = snippetDefaults(app);
  return {
    caddy: snippet('caddy', app, config.issuer, options),
    nginx: snippet('nginx', app, config.issuer, options),
    traefik: snippet('traefik', app, config.issuer, options),
  };
}

/** How LDAP clients reach the directory: the issuer's host name, StartTLS when LAN TLS is on. */
function ldapContext(config: Config, app: Application): SetupContext['ldap'] {
  if (!config.ldap.enabled) return null;
  const base = baseDn(config);
  const host = new URL(config.issuer).hostname;
  return {
    url: `ldap://${host.includes(':') ? `[${host}]` : host}:${config.ldap.port}`,
    startTls: hasLocalCa(config.tls),
    baseDn: base,
    bindDn: applicationBindDn(config, app.id),
    peopleDn: peopleDn(base),
    groupsDn: groupsDn(base),
  };
}

/** What the application's server runs on (its preset's runtime; `system` without one). */
export const runtimeOf = (presetId: string | undefined): TrustRuntime => (presetId ? findPreset(presetId)?.runtime : undefined) ?? 'system';

/** The set-up text for an application: its preset's, or the generic OpenID Connect one. */
export function setupFor(context: SetupContext, presetId: string | undefined): Setup {
  const preset = presetId ? findPreset(presetId) : undefined;
  if (preset) return preset.setup(context);
  return genericSetup(context);
}

function genericSetup(c: SetupContext): Setup {
  return {
    settings: [
      { label: 'Issuer', value: c.issuer },
      { label: 'Discovery URL', value: c.discoveryUrl },
      { label: 'Client ID', value: c.app.id },
      ...(c.app.clientType === 'web' ? [{ label: 'Client secret', value: PLACEHOLDERS.clientSecret }] : []),
      ...c.app.redirectUris.map((uri) => ({ label: 'Redirect URI', value: uri })),
      { label: 'Scopes', value: 'openid profile email' },
      { label: 'Audience (resource)', value: c.app.audience },
    ],
    files: [],
    notes: [
      'Most libraries need only the issuer: they read every endpoint from the discovery document. docs/integrations/oidc.md is the generic guide.',
      ...(c.app.clientType === 'web' ? [PLACEHOLDER_NOTE] : ['A public client has no secret: it proves itself with PKCE.']),
      ...caTrust.runtime(c),
      TEST_SIGN_IN_NOTE,
    ],
  };
}
