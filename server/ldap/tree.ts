/**
 * The shape of the directory tree (spec ldap.md, "The tree"; RFC 4512 §2.3 names): the base
 * (`dcObject`), `ou=people`, `ou=groups` and `ou=services` below it, and the DN of each entry.
 * The one place these names are spelled: the admin API shows a service account's bind DN from
 * here, and the LDAP server parses the DNs it is sent against the same shapes.
 */
import { ldapBaseDn, type Config } from '../config.js';

export type TreeConfig = Pick<Config, 'issuer' | 'ldap'>;

export const PEOPLE_OU = 'people';
export const GROUPS_OU = 'groups';
export const SERVICES_OU = 'services';

/** RFC 4514 §2.4: the characters escaped in an attribute value of a DN string. */
export function escapeDnValue(value: string): string {
  let out = value.replace(/[\\,+"<>;=]/g, (c) => `\\${c}`);
  if (out.startsWith('#') || out.startsWith(' ')) out = `\\${out}`;
  if (out.endsWith(' ') && out.length > 1) out = `${out.slice(0, -1)}\\ `;
  return out;
}

export function baseDn(config: TreeConfig): string {
  return ldapBaseDn(config);
}

export const peopleDn = (base: string) => `ou=${PEOPLE_OU},${base}`;
export const groupsDn = (base: string) => `ou=${GROUPS_OU},${base}`;
export const servicesDn = (base: string) => `ou=${SERVICES_OU},${base}`;
export const personDn = (base: string, username: string) => `uid=${escapeDnValue(username)},${peopleDn(base)}`;
export const groupDn = (base: string, groupId: string) => `cn=${escapeDnValue(groupId)},${groupsDn(base)}`;
export const serviceAccountDn = (base: string, applicationId: string) => `cn=${escapeDnValue(applicationId)},${servicesDn(base)}`;

/** The bind DN of an application's service account under this configuration. */
export function applicationBindDn(config: TreeConfig, applicationId: string): string {
  return serviceAccountDn(baseDn(config), applicationId);
}
