/**
 * The directory's entries (spec ldap.md, "The tree"), built from rows:
 * - the base (`dcObject` + `organization`), `ou=people`, `ou=groups`, `ou=services`;
 * - a person, `uid=<username>,ou=people,<base>`: inetOrgPerson + posixAccount (RFC 2798, RFC
 *   2307bis), with memberOf and the operational entryUUID (the person id), createTimestamp and
 *   modifyTimestamp; gidNumber is their user-private group's number, their uidNumber;
 * - a group, `cn=<id>,ou=groups,<base>`: groupOfNames + posixGroup, `member`/`memberUid` only the
 *   people the reader sees;
 * - the root DSE (RFC 4512 §5.1).
 */
import { packageVersion } from '../util/install-paths.js';
import type { Dn } from './dn.js';
import type { Matchable } from './filter.js';
import { OID, type EntryAttribute } from './protocol.js';
import { attributeType, generalizedTime, type AttributeType } from './schema.js';
import type { GroupRow, MemberRow } from './queries.js';
import { GROUPS_OU, PEOPLE_OU, SERVICES_OU, groupDn, groupsDn, peopleDn, personDn, servicesDn } from './tree.js';

/** An entry: its DN and attribute values by canonical name, in the order they are returned. */
export class Entry implements Matchable {
  private readonly byName = new Map<string, string[]>();

  constructor(
    readonly dn: string,
    attributes: [string, (string | number | null | undefined)[]][],
  ) {
    for (const [name, raw] of attributes) {
      const values = raw.filter((v): v is string | number => v !== null && v !== undefined && v !== '').map(String);
      if (values.length) this.byName.set(name, values);
    }
  }

  values(type: AttributeType): readonly string[] | undefined {
    return this.byName.get(type.name);
  }

  /**
   * The attributes a search asked for (RFC 4511 §4.5.1.8): none asked, or `*`, is every user
   * attribute; `+` every operational one (RFC 3673); `1.1` alone, none; other names (any case,
   * alias or OID) that one. `typesOnly` leaves the values out.
   */
  select(requested: readonly string[], typesOnly: boolean): EntryAttribute[] {
    const all = requested.length === 0 || requested.includes('*');
    const operational = requested.includes('+');
    const named = new Set(requested.map((r) => attributeType(r)?.name).filter((n): n is string => n !== undefined));
    const out: EntryAttribute[] = [];
    for (const [name, values] of this.byName) {
      const type = attributeType(name)!;
      if (named.has(name) || (type.operational ? operational : all)) out.push({ name, values: typesOnly ? [] : values });
    }
    return out;
  }
}

export interface Tree {
  /** The base DN as configured (or derived), and parsed. */
  base: string;
  baseDn: Dn;
}

export const PERSON_CLASSES = ['top', 'person', 'organizationalPerson', 'inetOrgPerson', 'posixAccount'];
export const GROUP_CLASSES = ['top', 'groupOfNames', 'posixGroup'];
const OU_CLASSES = ['top', 'organizationalUnit'];

/** The base entry: `dcObject` (+ `organization`, its structural class) when it is a `dc=`. */
export function baseEntry(tree: Tree): Entry {
  const first = tree.baseDn[0]?.[0];
  const value = tree.base.split(',')[0]!.split('=').slice(1).join('=');
  if (first?.type === 'dc') return new Entry(tree.base, [['objectClass', ['top', 'dcObject', 'organization']], ['dc', [value]], ['o', ['Gatehouse']]]);
  if (first?.type === 'o') return new Entry(tree.base, [['objectClass', ['top', 'organization']], ['o', [value]]]);
  return new Entry(tree.base, [['objectClass', ['top', 'organizationalUnit']], ['ou', [value]]]);
}

export const ouEntry = (tree: Tree, ou: typeof PEOPLE_OU | typeof GROUPS_OU | typeof SERVICES_OU) => {
  const dn = ou === PEOPLE_OU ? peopleDn(tree.base) : ou === GROUPS_OU ? groupsDn(tree.base) : servicesDn(tree.base);
  return new Entry(dn, [['objectClass', OU_CLASSES], ['ou', [ou]]]);
};

export function personEntry(tree: Tree, { person }: MemberRow, groupIds: readonly string[]): Entry {
  const name = person.name ?? person.username;
  return new Entry(personDn(tree.base, person.username), [
    ['objectClass', PERSON_CLASSES],
    ['uid', [person.username]],
    ['cn', [name]],
    ['displayName', [name]],
    ['givenName', [person.givenName]],
    ['sn', [person.familyName ?? name]],
    ['mail', [person.email]],
    ['memberOf', groupIds.map((id) => groupDn(tree.base, id))],
    ['uidNumber', [person.uidNumber]],
    ['gidNumber', [person.uidNumber]],
    ['homeDirectory', [`/home/${person.username}`]],
    ['loginShell', ['/bin/sh']],
    ['entryUUID', [person.id]],
    ['createTimestamp', [generalizedTime(person.createdAt)]],
    ['modifyTimestamp', [generalizedTime(person.updatedAt)]],
  ]);
}

export function groupEntry(tree: Tree, group: GroupRow, usernames: readonly string[]): Entry {
  return new Entry(groupDn(tree.base, group.id), [
    ['objectClass', GROUP_CLASSES],
    ['cn', [group.id]],
    ['description', [group.description ?? group.name]],
    ['member', usernames.map((u) => personDn(tree.base, u))],
    ['memberUid', [...usernames]],
    ['gidNumber', [group.gidNumber]],
    ['entryUUID', [group.id]],
    ['createTimestamp', [generalizedTime(group.createdAt)]],
    ['modifyTimestamp', [generalizedTime(group.updatedAt)]],
  ]);
}

/** The root DSE (RFC 4512 §5.1): what this server is and supports, readable before a bind. */
export function rootDse(tree: Tree, startTls: boolean): Entry {
  return new Entry('', [
    ['objectClass', ['top']],
    ['namingContexts', [tree.base]],
    ['supportedLDAPVersion', ['3']],
    ['supportedExtension', [...(startTls ? [OID.startTls] : []), OID.whoAmI]],
    ['supportedControl', [OID.pagedResults]],
    // RFC 3673 (`+`: all operational attributes) and RFC 4526 (absolute true and false filters).
    ['supportedFeatures', ['1.3.6.1.4.1.4203.1.5.1', '1.3.6.1.4.1.4203.1.5.3']],
    ['vendorName', ['Gatehouse']],
    ['vendorVersion', [packageVersion()]],
  ]);
}
