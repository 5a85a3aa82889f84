/**
 * What a source reads when the administrator does not say otherwise (spec directory-sources.md,
 * "attributes"), for the two dialects:
 *
 * - `ldap` (OpenLDAP, 389 DS, a NAS's directory): people are `inetOrgPerson` entries keyed by
 *   `entryUUID` (RFC 4530, an operational attribute every modern server keeps), groups are
 *   `groupOfNames` (`member`), `groupOfUniqueNames` (`uniqueMember`) or `posixGroup` (`memberUid`,
 *   usernames); nesting (a group's `member` naming another group) is flattened here.
 * - `active_directory`, written from Microsoft's documentation and run against a Samba AD domain
 *   controller in the tests (test/integration/directory-active-directory.test.ts; not against a
 *   Windows one):
 *   - `objectGUID` is the key (MS-ADA3 "Object-Guid": 16 bytes, stable across renames and moves),
 *     written as the usual GUID string: the first three fields are little-endian
 *     (`guidToString`);
 *   - `sAMAccountName` the username, `userPrincipalName` unused, `mail`, `displayName`, `givenName`, `sn`;
 *   - people `(&(objectCategory=person)(objectClass=user))` (MS-ADTS 3.1.1.3.1.3.4: computer accounts
 *     are also `user` objects, so the category is what tells people apart), groups `(objectClass=group)`;
 *   - a person is disabled when `userAccountControl` has ACCOUNTDISABLE, 0x2 (MS-ADTS 2.2.16);
 *   - a group's people, nested groups included, through the LDAP_MATCHING_RULE_IN_CHAIN
 *     `1.2.840.113556.1.4.1941` (MS-ADTS 3.1.1.3.4.4.3): `(memberOf:1.2.840.113556.1.4.1941:=<group DN>)`;
 *   - changes since the last run by `uSNChanged` (MS-ADTS 3.1.1.1.9, "USNs": an update sequence
 *     number per domain controller, so a changes-only run must keep talking to the same one; a
 *     full run daily catches anything missed).
 */
import type { DirectoryAttributes, DirectorySourceKind } from '../db/schema.js';

export const IN_CHAIN_RULE = '1.2.840.113556.1.4.1941';
/** MS-ADTS 2.2.16 userAccountControl: ADS_UF_ACCOUNTDISABLE. */
export const UAC_ACCOUNT_DISABLE = 0x2;

export interface KindDefaults {
  attributes: DirectoryAttributes;
  peopleFilter: string;
  groupsFilter: string;
  /** The attribute a changes-only run compares (`modifyTimestamp`, `uSNChanged`). */
  changeAttribute: string;
}

export const KIND_DEFAULTS: Record<DirectorySourceKind, KindDefaults> = {
  ldap: {
    attributes: {
      id: 'entryUUID',
      username: 'uid',
      email: 'mail',
      name: 'displayName',
      givenName: 'givenName',
      familyName: 'sn',
      groupName: 'cn',
      members: ['member', 'uniqueMember', 'memberUid'],
      nestedMembers: false,
    },
    peopleFilter: '(objectClass=inetOrgPerson)',
    groupsFilter: '(|(objectClass=groupOfNames)(objectClass=groupOfUniqueNames)(objectClass=posixGroup))',
    changeAttribute: 'modifyTimestamp',
  },
  active_directory: {
    attributes: {
      id: 'objectGUID',
      username: 'sAMAccountName',
      email: 'mail',
      name: 'displayName',
      givenName: 'givenName',
      familyName: 'sn',
      groupName: 'cn',
      members: ['member'],
      nestedMembers: true,
    },
    peopleFilter: '(&(objectCategory=person)(objectClass=user))',
    groupsFilter: '(objectClass=group)',
    changeAttribute: 'uSNChanged',
  },
};

/** Attributes read as bytes (binary keys). */
export const BINARY_ATTRIBUTES = ['objectGUID'];

/** A 16-byte GUID as Active Directory writes it: `{3F2504E0-4F89-11D3-9A0C-0305E82C3301}` without braces, lower-case. */
export function guidToString(bytes: Buffer): string {
  if (bytes.length !== 16) throw new Error('a GUID has 16 bytes');
  const hex = (from: number, to: number, reverse: boolean) => {
    const part = bytes.subarray(from, to);
    return Buffer.from(reverse ? [...part].reverse() : part).toString('hex');
  };
  return `${hex(0, 4, true)}-${hex(4, 6, true)}-${hex(6, 8, true)}-${hex(8, 10, false)}-${hex(10, 16, false)}`;
}

/** The 16 bytes of a GUID string (the inverse of `guidToString`), for an `(objectGUID=…)` filter. */
export function guidToBytes(guid: string): Buffer {
  const hex = guid.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new Error('not a GUID');
  const b = Buffer.from(hex, 'hex');
  return Buffer.concat([Buffer.from([...b.subarray(0, 4)].reverse()), Buffer.from([...b.subarray(4, 6)].reverse()), Buffer.from([...b.subarray(6, 8)].reverse()), b.subarray(8)]);
}
