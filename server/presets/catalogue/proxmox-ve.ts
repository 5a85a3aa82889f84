/**
 * Proxmox VE's OpenID Connect realm. Facts from the Proxmox VE Administration Guide
 * (pve-docs 9.1.3, pveum.adoc "OpenID Connect"): issuer-url, client-id, client-key, autocreate,
 * username-claim (subject, username or email), groups-claim, and `pveum realm add … --type openid`.
 */
import { PLACEHOLDERS, PLACEHOLDER_NOTE, TEST_SIGN_IN_NOTE, baseOf, baseUrlInput, caTrust, oidcApplication, oidcSettings } from '../build.js';
import type { Preset } from '../types.js';

const DOC = 'https://pve.proxmox.com/pve-docs/chapter-pveum.html#pveum_openid';

export const proxmoxVe: Preset = {
  id: 'proxmox-ve',
  name: 'Proxmox VE',
  category: 'web-app',
  protocol: 'oidc',
  version: 1,
  summary: 'Proxmox VE\'s web interface signs people in through an OpenID Connect realm.',
  inputs: [
    baseUrlInput('Proxmox VE web interface address', 'https://pve.lan.example:8006', 'The address you open the web interface at, with its port.'),
    {
      key: 'realm', label: 'Realm name', example: 'gatehouse', kind: 'text', required: false, default: 'gatehouse',
      pattern: { source: '^[A-Za-z][A-Za-z0-9._-]{1,31}$', message: 'a letter, then letters, digits, ., - or _ (2 to 32)' },
    },
  ],
  testedWith: { status: 'documentation', product: 'Proxmox VE', version: '9.1', test: null },
  sources: [{ title: 'Proxmox VE Administration Guide: User Management', section: 'OpenID Connect (options, Username mapping, Groups mapping, Examples)', url: DOC, version: '9.1.3' }],
  caveats: [
    'The guide names subject, username or email for username-claim. Gatehouse sends the username as preferred_username (there is no claim called username), so the preset uses email: Proxmox users look like alice@example.com@gatehouse.',
    'The guide does not name the redirect URI: the web interface sends its own address (the page you signed in from), so the preset registers the base address with and without the trailing slash.',
  ],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes: ['openid', 'email', 'profile'] },
  application: (inputs) => oidcApplication({ redirectUris: [baseOf(inputs), `${baseOf(inputs)}/`] }),
  requirements: () => [{ kind: 'claim', claim: 'email', text: 'email is in the ID token (username-claim email)' }],
  setup: (c) => {
    const realm = c.inputs.realm ?? 'gatehouse';
    const command = `pveum realm add ${realm} --type openid --issuer-url '${c.issuer}' --client-id '${c.app.id}' --client-key '${PLACEHOLDERS.clientSecret}' --username-claim email --autocreate 1\n`;
    return {
      settings: [
        { label: 'Realm', value: realm },
        { label: 'Issuer URL', value: c.issuer },
        ...oidcSettings(c).filter((s) => s.label.startsWith('Client')).map((s) => (s.label === 'Client secret' ? { label: 'Client Key', value: s.value } : s)),
        { label: 'Username Claim', value: 'email' },
        { label: 'Autocreate Users', value: 'on' },
      ],
      files: [{ name: 'pveum-realm.sh', content: command }],
      notes: [
        'Run the command on a cluster node (or add the realm under Datacenter → Permissions → Realms → Add → OpenID Connect Server). New users get no permissions until you grant them.',
        PLACEHOLDER_NOTE,
        ...caTrust.runtime(c),
        TEST_SIGN_IN_NOTE,
      ],
    };
  },
};
