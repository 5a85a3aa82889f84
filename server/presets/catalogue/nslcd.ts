/**
 * A Linux host's accounts and groups from Gatehouse through nslcd (nss-pam-ldapd). Facts from
 * nslcd.conf(5) as shipped with Debian 12's nslcd 0.9.12 (uri, base, binddn, bindpw, ssl start_tls,
 * tls_cacertfile, filter, map) and the RFC 2307 attributes Gatehouse serves (docs/ldap.md).
 */
import { PLACEHOLDERS } from '../build.js';
import type { Preset } from '../types.js';
import { LDAP_NOTES, ldapApplication, ldapOffNote, ldapSettings } from './ldap-family.js';

export const nslcd: Preset = {
  id: 'nslcd',
  name: 'Linux hosts (nslcd)',
  category: 'ldap',
  protocol: 'ldap',
  version: 1,
  summary: 'Linux machines see Gatehouse\'s members and groups as accounts (getent passwd, id) through nslcd; people log in with app passwords.',
  inputs: [
    { key: 'baseUrl', label: 'A name for the hosts (an address of one of them)', example: 'https://server.lan.example', kind: 'url', required: true, hint: 'Only used to name the application.' },
    { key: 'usersGroup', label: 'Group whose members get accounts', example: 'linux-users', kind: 'group', required: false, hint: 'Optional: only members of this group are listed as accounts.' },
  ],
  testedWith: { status: 'tested', product: 'nslcd (nss-pam-ldapd)', version: '0.9.12 (Debian 12)', test: 'test/interop/presets-ldap.test.ts' },
  sources: [{ title: 'nslcd.conf(5)', section: 'uri, base, binddn, bindpw, ssl, tls_cacertfile, filter', url: 'https://arthurdejong.org/nss-pam-ldapd/nslcd.conf.5', version: '0.9.12' }],
  caveats: ['nslcd reads /etc/nslcd.conf and must be told which databases to use in /etc/nsswitch.conf (passwd: files ldap, group: files ldap).'],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes: [] },
  application: ldapApplication,
  requirements: () => [],
  setup: (c) => {
    const conf = c.ldap
      ? [
          // Debian's nslcd runs as its own user (nslcd.conf(5): uid, gid).
          'uid nslcd',
          'gid nslcd',
          `uri ${c.ldap.url}`,
          `base ${c.ldap.baseDn}`,
          `binddn ${c.ldap.bindDn}`,
          `bindpw ${PLACEHOLDERS.ldapPassword}`,
          ...(c.ldap.startTls ? ['ssl start_tls', 'tls_reqcert demand', 'tls_cacertfile /etc/ssl/certs/gatehouse-ca.pem'] : []),
          `base passwd ${c.ldap.peopleDn}`,
          `base group ${c.ldap.groupsDn}`,
          ...(c.inputs.usersGroup ? [`filter passwd (memberOf=cn=${c.inputs.usersGroup},${c.ldap.groupsDn})`] : []),
        ].join('\n') + '\n'
      : '';
    return {
      settings: ldapSettings(c),
      files: c.ldap ? [{ name: 'nslcd.conf', content: conf }, { name: 'nsswitch.conf', content: 'passwd: files ldap\ngroup:  files ldap\n' }] : [],
      notes: [...ldapOffNote(c), 'Install nslcd and libnss-ldapd, write nslcd.conf (mode 0600: it holds the password), add ldap to passwd and group in nsswitch.conf, restart nslcd.', ...LDAP_NOTES],
    };
  },
};
