/**
 * Small helpers the catalogue's presets are written with, so each preset file states only what
 * is particular to its app: the application defaults, the common inputs, the secret placeholders,
 * the settings every OIDC app asks for, and how each kind of runtime trusts the appliance's CA
 * when LAN TLS is on.
 */
import type { SetupTrust } from '../http/lan-trust-wire.js';
import type { PresetApplication, PresetInput, PresetInputs, SetupContext } from './types.js';

/**
 * What the set-up text shows in place of a secret: the secret itself was shown once (at creation
 * or rotation) and Gatehouse keeps only its hash. The interop tests replace exactly these strings.
 */
export const PLACEHOLDERS = {
  clientSecret: '<client-secret>',
  ldapPassword: '<ldap-service-account-password>',
  /** A RADIUS client's shared secret (shown once in radiusSecrets). */
  radiusSecret: '<radius-client-secret>',
  /** A secret the app keeps for itself (cookie or session encryption): any long random string. */
  appSecret: '<random-secret>',
} as const;

export const PLACEHOLDER_NOTE =
  `Replace ${PLACEHOLDERS.clientSecret} with the client secret shown when the application was created (rotate it on the application's page if it is lost).`;

/** An application that signs in with the authorization code grant, with nothing else set. */
export function oidcApplication(settings: Partial<PresetApplication> & Pick<PresetApplication, 'redirectUris'>): PresetApplication {
  return {
    clientType: 'web',
    postLogoutRedirectUris: null,
    grantTypes: ['authorization_code'],
    backchannelLogoutUri: null,
    unknownScopes: 'reject',
    groupsFilter: null,
    customClaims: [],
    resourceServers: [],
    forwardAuth: null,
    allowedGroups: null,
    ldap: { enabled: false },
    radius: null,
    saml: null,
    signingAlg: 'RS256',
    ...settings,
  };
}

/** The `baseUrl` input (present on every preset). */
export function baseUrlInput(label: string, example: string, hint?: string): PresetInput {
  return { key: 'baseUrl', label, example, kind: 'url', required: true, ...(hint ? { hint } : {}) };
}

/** An optional directory group input. */
export function groupInput(key: string, label: string, example: string, hint: string): PresetInput {
  return { key, label, example, kind: 'group', required: false, hint };
}

/** The app's base URL as given (validated and stored without a trailing slash). */
export const baseOf = (inputs: PresetInputs): string => inputs.baseUrl ?? '';

/** The host (with a port when it has one) of the base URL. */
export function hostOf(inputs: PresetInputs): string {
  try {
    return new URL(baseOf(inputs)).host;
  } catch {
    return baseOf(inputs);
  }
}

/** The settings every OIDC relying party asks for, in the order set-up screens usually list them. */
export function oidcSettings(context: SetupContext, options: { secret?: boolean; redirect?: string } = {}): { label: string; value: string }[] {
  return [
    { label: 'Issuer', value: context.issuer },
    { label: 'Discovery URL', value: context.discoveryUrl },
    { label: 'Client ID', value: context.app.id },
    ...(options.secret === false ? [] : [{ label: 'Client secret', value: PLACEHOLDERS.clientSecret }]),
    ...(options.redirect ? [{ label: 'Redirect URI', value: options.redirect }] : []),
  ];
}

/** A `KEY=value` environment block. */
export const envBlock = (entries: [string, string][]): string => entries.map(([key, value]) => `${key}=${value}`).join('\n') + '\n';

/**
 * How each kind of software trusts the appliance's CA when LAN TLS is on (each note names the
 * mechanism the runtime documents). Empty when LAN TLS is off: there is nothing to trust.
 */
export const caTrust = {
  /**
   * The lines of the preset's runtime (`Preset.runtime`: Node's NODE_EXTRA_CA_CERTS, Python's
   * REQUESTS_CA_BUNDLE and SSL_CERT_FILE, PHP's curl.cainfo, Nextcloud's occ import, Java's
   * keytool, the system store), from the one generator (trust/setup-trust.ts), as a note.
   */
  runtime: (c: SetupContext) => (c.trust ? [runtimeTrustNote(c.trust, c.app.name)] : []),
  /** Apache mod_auth_openidc: OIDCCABundlePath (auth_openidc.conf). */
  apache: (c: SetupContext) => caNote(c, `download it and set OIDCCABundlePath to a bundle holding it (auth_openidc.conf, "OIDCCABundlePath").`),
  /** Proxies and LDAP clients name the file in their own configuration (shown by each preset). */
  file: (c: SetupContext, how: string) => caNote(c, `download it and ${how}`),
};

/** The trust lines in words: download (checking the fingerprint), then the runtime's variables, settings and commands. */
export function runtimeTrustNote(trust: SetupTrust, appName: string): string {
  const steps = [`download the CA to ${trust.caPath} (${trust.commands[0]}) and check that ${trust.commands[1]} prints SHA256 Fingerprint=${trust.fingerprintSha256}`];
  const env = Object.entries(trust.env).map(([name, value]) => `${name}=${value}`);
  if (env.length) steps.push(`start it with ${env.join(' ')}`);
  for (const setting of trust.settings) steps.push(`set ${setting.name} = ${setting.value} in ${setting.file}`);
  for (const command of trust.commands.slice(2)) steps.push(`run ${command}`);
  const replaces = ['SSL_CERT_FILE', 'REQUESTS_CA_BUNDLE'].filter((name) => name in trust.env);
  const caveat = replaces.length
    ? ` ${replaces.join(' and ')} replace${replaces.length === 1 ? 's' : ''} the default CA bundle: if ${appName} also calls public HTTPS sites, point ${replaces.length === 1 ? 'it' : 'them'} at a bundle holding both (cat /etc/ssl/certs/ca-certificates.crt ${trust.caPath} > bundle.pem), or add the CA to the system store (Debian: update-ca-certificates).`
    : '';
  return `LAN TLS is on: ${appName} must trust Gatehouse's local CA to reach it. To do so, ${steps.join('; then ')}.${caveat}`;
}

function caNote(context: SetupContext, how: string): string[] {
  if (!context.lanCa) return [];
  return [`LAN TLS is on: ${context.app.name} must trust Gatehouse's local CA (${context.lanCa.url}) to reach ${context.issuer}. To do so, ${how}`];
}

/** A note on the test callback, for presets whose app can run Test sign-in from the panel. */
export const TEST_SIGN_IN_NOTE =
  'After the app is configured, run Test sign-in on the application\'s page: it signs in with the same settings and checks what this app needs.';
