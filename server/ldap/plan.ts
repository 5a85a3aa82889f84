/**
 * Which rows a search must look at (spec ldap.md: "Searches must use indexes"): from the filter,
 * the smallest set of people and of groups that holds every entry the filter can be TRUE for.
 * The filter is then evaluated on each of them (filter.ts), so a plan only has to be generous,
 * never exact:
 * - `(uid=ada)`, `(mail=…)`, `(entryUUID=…)`, `(uidNumber=…)` look people up by their unique
 *   indexes; `(memberOf=cn=family,ou=groups,…)` walks that group's members;
 * - `(cn=family)`, `(gidNumber=…)` look groups up; `(memberUid=ada)` and `(member=uid=ada,…)`
 *   start from that person's groups;
 * - an item that no entry of a kind can satisfy — `(objectClass=posixGroup)` for people, an
 *   attribute they do not have — rules that kind out (`none`): nslcd's group searches read no people;
 * - AND takes the narrowest of its items, OR joins look-ups of one key (else scans), NOT scans;
 * - anything else scans the kind, in slices, through the index of its keyset.
 */
import { isWithin, parseDn, singleAva, normalValue, type Dn } from './dn.js';
import { integerOf, type Filter } from './filter.js';
import { GROUP_CLASSES, PERSON_CLASSES } from './entries.js';
import type { MemberKey } from './queries.js';
import { attributeType } from './schema.js';
import { GROUPS_OU, PEOPLE_OU } from './tree.js';

export type PeoplePlan =
  | { kind: 'none' }
  | { kind: 'scan' }
  | { kind: 'lookup'; key: MemberKey; values: (string | number)[] }
  | { kind: 'inGroup'; groupId: string };

export type GroupPlan =
  | { kind: 'none' }
  | { kind: 'scan' }
  | { kind: 'lookup'; key: 'id' | 'gidNumber'; values: (string | number)[] }
  | { kind: 'ofMembers'; usernames: string[] };

const PERSON_ATTRIBUTES = new Set(['objectClass', 'uid', 'cn', 'displayName', 'givenName', 'sn', 'mail', 'memberOf', 'uidNumber', 'gidNumber', 'homeDirectory', 'loginShell', 'entryUUID', 'createTimestamp', 'modifyTimestamp']);
const GROUP_ATTRIBUTES = new Set(['objectClass', 'cn', 'description', 'member', 'memberUid', 'gidNumber', 'entryUUID', 'createTimestamp', 'modifyTimestamp']);
const personClasses = new Set(PERSON_CLASSES.map((c) => c.toLowerCase()));
const groupClasses = new Set(GROUP_CLASSES.map((c) => c.toLowerCase()));

const NONE = { kind: 'none' } as const;
const SCAN = { kind: 'scan' } as const;

/** The value of the leaf RDN of `dn` when it is `<type>=<value>,ou=<ou>,<base>`. */
function leafUnder(text: string, type: string, ou: string, base: Dn): string | undefined {
  const dn = parseDn(text);
  if (!dn || dn.length !== base.length + 2 || !isWithin(dn, base)) return undefined;
  const parent = singleAva(dn[1]);
  const leaf = singleAva(dn[0]);
  return parent?.type === 'ou' && parent.value === ou && leaf?.type === type.toLowerCase() ? leaf.value : undefined;
}

type Plan = PeoplePlan | GroupPlan;

/** The narrowest of AND's plans: none beats a look-up, which beats a walk, which beats a scan. */
function narrowest<P extends Plan>(plans: P[]): P {
  const rank = (p: Plan) => (p.kind === 'none' ? 0 : p.kind === 'lookup' ? 1 + p.values.length / 1e6 : p.kind === 'scan' ? 3 : 2);
  return plans.reduce((best, p) => (rank(p) < rank(best) ? p : best), SCAN as P);
}

/** OR's plan: nothing when no branch can match, look-ups of one key joined, else a scan. */
function union<P extends Plan>(plans: P[]): P {
  const live = plans.filter((p) => p.kind !== 'none');
  if (live.length === 0) return NONE as P;
  const first = live[0]!;
  if (first.kind === 'lookup' && live.every((p) => p.kind === 'lookup' && p.key === first.key)) {
    const values = [...new Set(live.flatMap((p) => (p as { values: (string | number)[] }).values))];
    return { ...first, values } as P;
  }
  if (first.kind === 'ofMembers' && live.every((p) => p.kind === 'ofMembers')) {
    return { kind: 'ofMembers', usernames: [...new Set(live.flatMap((p) => (p as { usernames: string[] }).usernames))] } as P;
  }
  return SCAN as P;
}

/**
 * The plan of `filter` for one kind of entry: AND, OR, NOT and the items that only say "this
 * attribute" are judged alike for people and groups; `equality` plans an equality (or approx)
 * on an attribute the kind has.
 */
function planFor<P extends Plan>(filter: Filter, attributes: Set<string>, equality: (name: string, value: string) => P): P {
  switch (filter.type) {
    case 'and':
      return narrowest(filter.filters.map((f) => planFor(f, attributes, equality)));
    case 'or':
      return union(filter.filters.map((f) => planFor(f, attributes, equality)));
    case 'not':
      return SCAN as P;
    case 'extensible':
      return NONE as P;
    case 'present':
    case 'substrings':
    case 'ge':
    case 'le': {
      const name = attributeType(filter.attribute)?.name;
      return (name && attributes.has(name) ? SCAN : NONE) as P;
    }
    case 'equality':
    case 'approx': {
      const name = attributeType(filter.attribute)?.name;
      return name && attributes.has(name) ? equality(name, filter.value) : (NONE as P);
    }
  }
}

export function planPeople(filter: Filter, base: Dn): PeoplePlan {
  return planFor<PeoplePlan>(filter, PERSON_ATTRIBUTES, (name, value) => {
    switch (name) {
      case 'objectClass':
        return personClasses.has(value.trim().toLowerCase()) ? SCAN : NONE;
      case 'uid':
        return { kind: 'lookup', key: 'username', values: [normalValue(value)] };
      case 'mail':
        return { kind: 'lookup', key: 'email', values: [normalValue(value)] };
      case 'entryUUID':
        return { kind: 'lookup', key: 'id', values: [value] };
      case 'uidNumber':
      case 'gidNumber': {
        const n = integerOf(value);
        return n === undefined ? NONE : { kind: 'lookup', key: 'uidNumber', values: [n] };
      }
      case 'memberOf': {
        const groupId = leafUnder(value, 'cn', GROUPS_OU, base);
        return groupId === undefined ? NONE : { kind: 'inGroup', groupId };
      }
      default:
        return SCAN;
    }
  });
}

export function planGroups(filter: Filter, base: Dn): GroupPlan {
  return planFor<GroupPlan>(filter, GROUP_ATTRIBUTES, (name, value) => {
    switch (name) {
      case 'objectClass':
        return groupClasses.has(value.trim().toLowerCase()) ? SCAN : NONE;
      case 'cn':
        return { kind: 'lookup', key: 'id', values: [normalValue(value)] };
      case 'entryUUID':
        return { kind: 'lookup', key: 'id', values: [value] };
      case 'gidNumber': {
        const n = integerOf(value);
        return n === undefined ? NONE : { kind: 'lookup', key: 'gidNumber', values: [n] };
      }
      case 'memberUid':
        return { kind: 'ofMembers', usernames: [normalValue(value)] };
      case 'member': {
        const username = leafUnder(value, 'uid', PEOPLE_OU, base);
        return username === undefined ? NONE : { kind: 'ofMembers', usernames: [username] };
      }
      default:
        return SCAN;
    }
  });
}
