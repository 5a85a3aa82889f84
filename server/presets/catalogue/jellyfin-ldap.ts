/**
 * Jellyfin with its LDAP Authentication plugin (spec: "Jellyfin (LDAP)"). Facts from the plugin's
 * settings page (jellyfin-plugin-ldapauth v22 for Jellyfin 10.11: LDAP Server, Port, Secure LDAP,
 * StartTLS, Root CA Path, Bind User and Password, Base DN, Search Filter, Search Attributes, Uid
 * and Username Attributes, Admin Base DN and Filter with {username}, memberUid mode).
 */
import { baseUrlInput } from '../build.js';
import type { Preset } from '../types.js';
import { LDAP_NOTES, ldapApplication, ldapOffNote, ldapSettings } from './ldap-family.js';

const PAGE = 'https://github.com/jellyfin/jellyfin-plugin-ldapauth/blob/v22/LDAP-Auth/Config/configPage.html';

export const jellyfinLdap: Preset = {
  id: 'jellyfin-ldap',
  name: 'Jellyfin (LDAP plugin)',
  category: 'ldap',
  protocol: 'ldap',
  version: 1,
  summary: 'Jellyfin\'s LDAP Authentication plugin signs people in on TVs and phones with an app password.',
  inputs: [
    baseUrlInput('Jellyfin address', 'https://media.lan.example'),
    { key: 'usersGroup', label: 'Group allowed to sign in', example: 'media-users', kind: 'group', required: false, hint: 'Optional: only members of this directory group pass the search filter.' },
    { key: 'adminGroup', label: 'Group whose members are Jellyfin administrators', example: 'admins', kind: 'group', required: false, hint: 'Optional: the plugin\'s admin filter (applied when it creates the account).' },
  ],
  testedWith: { status: 'tested', product: 'the plugin\'s binds and searches with OpenLDAP\'s clients (Jellyfin itself does not run here)', version: 'plugin v22 (Jellyfin 10.11); ldap-utils 2.5', test: 'test/interop/presets-ldap.test.ts' },
  sources: [{ title: 'Jellyfin LDAP Authentication plugin: settings page', section: 'LDAP-Auth/Config/configPage.html', url: PAGE, version: 'v22 (Jellyfin 10.11.2)' }],
  caveats: ['The plugin binds as the service account, searches for the person with the search filter, then binds as the person with the password they typed: that must be an app password for this application.'],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes: [] },
  application: ldapApplication,
  requirements: () => [],
  setup: (c) => {
    const people = c.ldap ? `(&(objectClass=inetOrgPerson)${c.inputs.usersGroup ? `(memberOf=cn=${c.inputs.usersGroup},${c.ldap.groupsDn})` : ''})` : '';
    return {
      settings: c.ldap
        ? [
            { label: 'LDAP Server', value: new URL(c.ldap.url).hostname },
            { label: 'LDAP Port', value: new URL(c.ldap.url).port || '389' },
            { label: 'Secure LDAP', value: 'off' },
            { label: 'StartTLS', value: c.ldap.startTls ? 'on' : 'off' },
            ...ldapSettings(c).filter((s) => s.label.startsWith('Bind')).map((s) => ({ label: s.label === 'Bind password' ? 'LDAP Bind User Password' : 'LDAP Bind User', value: s.value })),
            { label: 'LDAP Base DN for searches', value: c.ldap.peopleDn },
            { label: 'LDAP Search Filter', value: people },
            { label: 'LDAP Search Attributes', value: 'uid, mail' },
            { label: 'LDAP Uid Attribute', value: 'uid' },
            { label: 'LDAP Username Attribute', value: 'uid' },
            ...(c.inputs.adminGroup ? [{ label: 'LDAP Admin Filter', value: `(memberOf=cn=${c.inputs.adminGroup},${c.ldap.groupsDn})` }] : []),
          ]
        : [],
      files: [],
      notes: [
        ...ldapOffNote(c),
        'Install "LDAP Authentication" from Jellyfin\'s plugin catalogue, then type these on its settings page and use "Save and Test LDAP Server Settings".',
        ...LDAP_NOTES,
        ...(c.lanCa ? [`LAN TLS is on: download Gatehouse's CA (${c.lanCa.url}) and give its path as "LDAP Root CA Path".`] : []),
      ],
    };
  },
};
