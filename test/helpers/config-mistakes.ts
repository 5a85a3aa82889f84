/**
 * A configuration file with 20 mistakes in 5 applications (issue 44: every problem of a file at
 * once), shared by the API's test (config-as-code.test.ts) and the CLI's (cli-config.test.ts).
 * Each application mixes kinds: the schemas' (a wrong type, an unknown field, a value not among
 * the choices), the services' rules (redirect URIs for the client type, names of things that do
 * not exist, an audience another application has), the file's own (a preset, a client secret's
 * reference). The server it is applied to has the application `media` (with the audience
 * https://media.example.com/api) and nothing else; the file's SSO group `office` and group
 * `staff` are made by the file itself, so naming them is no mistake.
 */
export const MISTAKES_FILE = `version: 1
ssoGroups:
  office:
    name: Office
groups:
  staff:
    name: Staff
applications:
  journal:
    name: ""
    audience: https://journal.example.com/api
    redirectUris: https://journal.example.com/cb
    consent: sometimes
    colour: blue
  forum:
    name: Forum
    audience: https://forum.example.com/api
    clientType: spa
    redirectUris: [http://forum.example.com/cb]
    grantTypes: [authorization_code, client_credentials]
    ssoGroupId: nowhere
    authPolicy: { allowed_providers: [email, myspace] }
  chat:
    name: Chat
    audience: https://chat.example.com/api
    redirectUris: [https://chat.example.com/cb]
    ssoGroupId: office
    unknownScopes: maybe
    signingAlg: HS256
    groupsFilter: [staff, nobody]
    branding: { accentColor: "#ffff00" }
  photos:
    name: Photos
    audience: https://media.example.com/api
    redirectUris: [https://photos.example.com/cb]
    clientType: spa
    clientSecret: \${PHOTOS_SECRET}
    preset: { id: nothing, version: 1, inputs: {}, applied: {} }
    customClaims:
      - { name: sub, source: { type: role } }
  media:
    name: Media
    redirectUris: [https://media.example.com/cb, ftp://media.example.com/cb]
    webhookUrl: https://media.example.com/hook
    backchannelLogoutUri: https://user:pw@media.example.com/logout
    resourceServers: [media]
`;

/** The variable the file's client secret names, not set where the CLI runs (and so not sent). */
export const MISSING_VARIABLE = 'PHOTOS_SECRET';

/** The setting the file's applications are checked against: `media` exists already. */
export const EXISTING_MEDIA = { id: 'media', name: 'Media', audience: 'https://media.example.com/api', redirectUris: ['https://media.example.com/cb'] };

/** The 20 problems, in the order of the file: [line, path, message]. */
export const MISTAKES: [number, string, string][] = [
  [10, 'applications.journal.name', 'must NOT have fewer than 1 characters'],
  [12, 'applications.journal.redirectUris', 'must be array'],
  [13, 'applications.journal.consent', 'must be one of: implicit, explicit'],
  [14, 'applications.journal.colour', 'is not a known field'],
  [19, 'applications.forum.redirectUris.0', 'http is allowed only for loopback or private-network hosts; use https'],
  [20, 'applications.forum.grantTypes', 'client_credentials is allowed only for confidential (web) applications'],
  [21, 'applications.forum.ssoGroupId', 'there is no SSO group "nowhere"'],
  [22, 'applications.forum.authPolicy.allowed_providers.1', 'unknown provider "myspace"'],
  [28, 'applications.chat.unknownScopes', 'must be one of: reject, ignore'],
  [29, 'applications.chat.signingAlg', 'must be one of: RS256, ES256, EdDSA'],
  [30, 'applications.chat.groupsFilter.1', 'there is no group "nobody"'],
  [31, 'applications.chat.branding.accentColor', "has a contrast of 1.07:1 with the buttons' white text; WCAG AA needs at least 4.5:1, so choose a darker colour"],
  [34, 'applications.photos.audience', '"https://media.example.com/api" is already the audience of another application'],
  [37, 'applications.photos.clientSecret', `the environment variable ${'PHOTOS_SECRET'} is not set (in the environment of gatehouse config apply)`],
  [38, 'applications.photos.preset', 'there is no preset "nothing" (GET /api/admin/presets lists them)'],
  [40, 'applications.photos.customClaims.0.name', '"sub" is a registered claim name that Gatehouse sets itself; choose another name'],
  [41, 'applications.media.audience', 'is required'],
  [43, 'applications.media.redirectUris.1', 'custom URI schemes are allowed only for native clients'],
  [45, 'applications.media.backchannelLogoutUri', 'must not contain credentials'],
  [46, 'applications.media.resourceServers', '"media" is this application; it introspects its own tokens already'],
];
