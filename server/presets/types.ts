/**
 * What an app preset is (spec presets-and-operations.md, "App presets"): data about one app —
 * how it connects (OIDC, forward auth or LDAP), the inputs it needs, the settings Gatehouse gives
 * its application at creation, what the app itself is configured with, what Test sign-in checks
 * afterwards, the set-up text, and where each fact comes from. One file per app under
 * `catalogue/`; this file holds only the shapes (no rules), so a preset reads as data.
 */

import type { SetupTrust, TrustRuntime } from '../http/lan-trust-wire.js';
import type { SamlAttribute, SamlNameIdFormat, SamlNameIdSource } from '../db/schema.js';

export type PresetProtocol = 'oidc' | 'forward-auth' | 'ldap' | 'radius' | 'saml';

/** The families the docs and the panel group presets by. */
export type PresetCategory = 'web-app' | 'library' | 'forward-auth' | 'ldap' | 'mail' | 'network' | 'saml';

/**
 * An input the administrator gives when creating from the preset (`presetInputs.<key>`).
 * - `url`: an absolute http(s) URL without query or fragment (stored without a trailing slash);
 *   `http:` only for loopback and private-network hosts, like redirect URIs;
 * - `group`: the id of an existing directory group;
 * - `application`: the id of an existing confidential (web) application;
 * - `text`: a short value matching `pattern`.
 */
export interface PresetInput {
  key: string;
  label: string;
  example: string;
  kind: 'url' | 'group' | 'application' | 'text';
  required: boolean;
  /** For `text`: the value's rule, and the message when it is broken. */
  pattern?: { source: string; message: string };
  /** For `text`: a rule a pattern cannot say, giving the value as stored (checked after `pattern`). */
  normalise?: (raw: string) => { value: string } | { error: string };
  /** For optional inputs: the value used when none is given. */
  default?: string;
  hint?: string;
}

/** The inputs as given (and completed with defaults), by key. */
export type PresetInputs = Readonly<Record<string, string | undefined>>;

/** A custom claim as the claims contract defines it (spec claims-and-groups.md). */
export interface PresetClaim {
  name: string;
  source:
    | { type: 'role' }
    | { type: 'inGroup'; group: string }
    | { type: 'groupMap'; map: { group: string; value: unknown }[]; default?: unknown }
    | { type: 'constant'; value: unknown };
  inAccessToken?: boolean;
}

/**
 * A SAML service provider as a preset sets it (the application field `saml`, spec saml.md): every
 * part written out (the NameID's source, the attributes or null for the defaults), so the stored
 * settings read back the same and a later preset version compares like with like (upgrade.ts).
 */
export interface PresetSaml {
  entityId: string;
  acs: { url: string }[];
  slo: { url: string; binding: 'HTTP-Redirect' | 'HTTP-POST' } | null;
  nameId: { format: SamlNameIdFormat; source: SamlNameIdSource };
  attributes: SamlAttribute[] | null;
  signResponse: boolean;
  signAssertion: boolean;
}

/**
 * The application settings a preset fills at creation: every field an administrator may later
 * change, and that a newer preset version may offer again (presets/upgrade.ts compares them).
 */
export interface PresetApplication {
  clientType: 'web' | 'spa' | 'native';
  redirectUris: string[];
  /** null: the redirect URIs stand in (the applications default); [] allows none. */
  postLogoutRedirectUris: string[] | null;
  grantTypes: ('authorization_code' | 'refresh_token' | 'client_credentials')[];
  backchannelLogoutUri: string | null;
  unknownScopes: 'reject' | 'ignore';
  groupsFilter: string[] | null;
  customClaims: PresetClaim[];
  /** Other applications that may introspect this one's tokens (RFC 7662), e.g. an IMAP server. */
  resourceServers: string[];
  forwardAuth: { hosts: string[]; basic: boolean } | null;
  /** The group rule (applications/group-rule.ts): only members of one of these groups use the app; null: no rule. */
  allowedGroups: string[] | null;
  ldap: { enabled: boolean };
  /** RADIUS clients and VLANs (server/radius/): the gear the preset is for; null: none. */
  radius: { clients: { name: string; address: string }[]; vlans: { group: string; vlan: number }[]; defaultVlan: number | null } | null;
  /** The SAML service provider (server/saml/): the app's entity ID, ACS, NameID and attributes; null: none. */
  saml: PresetSaml | null;
  signingAlg: 'RS256' | 'ES256' | 'EdDSA';
}

/** How the app itself is configured to talk to Gatehouse (shown by GET /presets/:id). */
export interface PresetClient {
  /** `none` for public clients. */
  tokenEndpointAuthMethod: 'client_secret_basic' | 'client_secret_post' | 'none';
  pkce: boolean;
  /** The scopes the app asks for; Test sign-in asks for the same. */
  scopes: string[];
}

/** What Test sign-in checks once the sign-in has worked (presets/requirements.ts runs them). */
export type Requirement =
  | { kind: 'refreshToken'; text: string }
  | { kind: 'claim'; claim: string; text: string }
  | { kind: 'claimTrue'; claim: string; text: string }
  | { kind: 'claimOneOf'; claim: string; values: unknown[]; text: string }
  | { kind: 'claimList'; claim: string; text: string }
  | { kind: 'accessTokenClaim'; claim: string; values?: unknown[]; text: string }
  | { kind: 'idTokenAlg'; alg: string; text: string };

/** A fact's source: the app's own documentation (or its shipped configuration), by title and version. */
export interface PresetSource {
  title: string;
  /** Section, file or page within it. */
  section: string;
  url: string;
  version: string;
}

/**
 * How far the preset is proved, the one field every place reads (the API, the panel, the
 * integration pages and the README): `tested`, Gatehouse's own tests run the app (or its
 * relying-party library) against it; `configuration`, the app does not run here, but a test
 * creates the application from the preset and checks its settings and Test sign-in checks against
 * a real Gatehouse; `documentation`, checked against the app's documentation only. `test` names
 * the file for the first two.
 */
export interface PresetTestedWith {
  status: 'tested' | 'configuration' | 'documentation';
  product: string;
  version: string;
  test: string | null;
}

/** Everything the set-up text can use; secrets are only ever placeholders (presets/placeholders.ts). */
export interface SetupContext {
  issuer: string;
  discoveryUrl: string;
  endpoints: { authorization: string; token: string; userinfo: string; jwks: string; endSession: string; introspection: string };
  app: { id: string; name: string; audience: string; redirectUris: string[]; clientType: 'web' | 'spa' | 'native' };
  inputs: PresetInputs;
  /** The local CA when LAN TLS is on (`GATEHOUSE_TLS=auto`), else null. */
  lanCa: { url: string } | null;
  /** How the app's server trusts the local CA, for the preset's runtime (ctx.lanTrust: trust/setup-trust.ts); null without a local CA. */
  trust: SetupTrust | null;
  ldap: { url: string; startTls: boolean; baseDn: string; bindDn: string; peopleDn: string; groupsDn: string } | null;
  /** Where RADIUS listens (GATEHOUSE_RADIUS=on), by the issuer's host name; null when it is off. */
  radius: { host: string; port: number; acctPort: number } | null;
  /** Reverse-proxy configuration for a forward-auth application, by proxy (when forward auth is set). */
  proxySnippets: { caddy: string; nginx: string; traefik: string } | null;
}

export interface Setup {
  settings: { label: string; value: string }[];
  files: { name: string; content: string }[];
  notes: string[];
}

export interface Preset {
  id: string;
  /** What administrators pick it by: the app, and how it connects when it has several ways ("Jellyfin (LDAP plugin)"). */
  name: string;
  category: PresetCategory;
  protocol: PresetProtocol;
  /** Bumped whenever what the preset sets changes; applications record the version they came from. */
  version: number;
  /** One line: what this preset connects. */
  summary: string;
  inputs: PresetInput[];
  testedWith: PresetTestedWith;
  /** What the app's server runs on, which says how it trusts the local CA (spec lan-trust.md); `system` when absent. */
  runtime?: TrustRuntime;
  sources: PresetSource[];
  /** Where the app's documentation and what it does (or what Gatehouse does) disagree, in words. */
  caveats: string[];
  client: PresetClient;
  application(inputs: PresetInputs): PresetApplication;
  requirements(inputs: PresetInputs): Requirement[];
  setup(context: SetupContext): Setup;
}
