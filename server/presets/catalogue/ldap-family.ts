/**
 * What the LDAP presets share (spec ldap.md): the application turns LDAP on (a service account
 * that may search its active members and the groups); people bind with app passwords.
 */
import { PLACEHOLDERS, baseOf, oidcApplication } from '../build.js';
import type { PresetApplication, PresetInputs, SetupContext } from '../types.js';

export function ldapApplication(inputs: PresetInputs): PresetApplication {
  // Not used for LDAP; an application needs a redirect URI.
  return oidcApplication({ redirectUris: [`${baseOf(inputs)}/`], ldap: { enabled: true } });
}

/** The connection settings every LDAP client asks for. */
export function ldapSettings(c: SetupContext): { label: string; value: string }[] {
  if (!c.ldap) return [];
  return [
    { label: 'LDAP server', value: c.ldap.url },
    { label: 'StartTLS', value: c.ldap.startTls ? 'yes' : 'no' },
    { label: 'Base DN', value: c.ldap.baseDn },
    { label: 'Bind DN (service account)', value: c.ldap.bindDn },
    { label: 'Bind password', value: PLACEHOLDERS.ldapPassword },
    { label: 'Users', value: c.ldap.peopleDn },
    { label: 'Groups', value: c.ldap.groupsDn },
  ];
}

export const LDAP_NOTES = [
  `Replace ${PLACEHOLDERS.ldapPassword} with the service account's password, shown once when LDAP was turned on (POST …/ldap/password, or Connect › LDAP on the application's page, makes a new one).`,
  'People sign in with their username and an app password made for this application on their account page: their Gatehouse password never works over LDAP, so a second factor cannot be bypassed.',
];

/** Where LDAP is off on this server. */
export const ldapOffNote = (c: SetupContext): string[] =>
  c.ldap ? [] : ['The LDAP directory is off on this server: start Gatehouse with GATEHOUSE_LDAP=on (docs/ldap.md), then open this page again.'];
