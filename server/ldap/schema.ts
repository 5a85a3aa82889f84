/**
 * RFC 4512 §2.5 / RFC 4519 / RFC 2307bis: the attribute types this directory serves, their names,
 * aliases and OIDs (any of which a client may use, in any case), and how their values match
 * (RFC 4517 matching rules, reduced to what the values here need):
 *
 * - `caseIgnore`: caseIgnoreMatch / caseIgnoreIA5Match, with the substrings and ordering rules of
 *   the same kind (uid, cn, sn, mail, memberUid: usernames and addresses are case-insensitive here);
 * - `caseExact`: caseExactIA5Match (homeDirectory, loginShell);
 * - `integer`: integerMatch and integerOrderingMatch (uidNumber, gidNumber);
 * - `dn`: distinguishedNameMatch (member, memberOf; values compared in their normal form, dn.ts);
 * - `oid`: objectIdentifierMatch on names (objectClass);
 * - `generalizedTime`: generalizedTimeMatch and its ordering (createTimestamp, modifyTimestamp).
 *
 * `operational` attributes are returned only when asked for by name or with `+` (RFC 3673).
 */

export type Matching = 'caseIgnore' | 'caseExact' | 'integer' | 'dn' | 'oid' | 'generalizedTime';

export interface AttributeType {
  /** The name returned in entries. */
  name: string;
  aliases: string[];
  oid: string;
  matching: Matching;
  operational?: boolean;
}

const TYPES: AttributeType[] = [
  { name: 'objectClass', aliases: [], oid: '2.5.4.0', matching: 'oid' },
  { name: 'cn', aliases: ['commonName'], oid: '2.5.4.3', matching: 'caseIgnore' },
  { name: 'sn', aliases: ['surname'], oid: '2.5.4.4', matching: 'caseIgnore' },
  { name: 'givenName', aliases: ['gn'], oid: '2.5.4.42', matching: 'caseIgnore' },
  { name: 'displayName', aliases: [], oid: '2.16.840.1.113730.3.1.241', matching: 'caseIgnore' },
  { name: 'description', aliases: [], oid: '2.5.4.13', matching: 'caseIgnore' },
  { name: 'uid', aliases: ['userid'], oid: '0.9.2342.19200300.100.1.1', matching: 'caseIgnore' },
  { name: 'mail', aliases: ['rfc822Mailbox'], oid: '0.9.2342.19200300.100.1.3', matching: 'caseIgnore' },
  { name: 'dc', aliases: ['domainComponent'], oid: '0.9.2342.19200300.100.1.25', matching: 'caseIgnore' },
  { name: 'o', aliases: ['organizationName'], oid: '2.5.4.10', matching: 'caseIgnore' },
  { name: 'ou', aliases: ['organizationalUnitName'], oid: '2.5.4.11', matching: 'caseIgnore' },
  { name: 'member', aliases: [], oid: '2.5.4.31', matching: 'dn' },
  { name: 'memberOf', aliases: [], oid: '1.2.840.113556.1.2.102', matching: 'dn' },
  { name: 'memberUid', aliases: [], oid: '1.3.6.1.1.1.1.12', matching: 'caseIgnore' },
  { name: 'uidNumber', aliases: [], oid: '1.3.6.1.1.1.1.0', matching: 'integer' },
  { name: 'gidNumber', aliases: [], oid: '1.3.6.1.1.1.1.1', matching: 'integer' },
  { name: 'homeDirectory', aliases: [], oid: '1.3.6.1.1.1.1.3', matching: 'caseExact' },
  { name: 'loginShell', aliases: [], oid: '1.3.6.1.1.1.1.4', matching: 'caseExact' },
  // Gatehouse's ids, which are case-sensitive (the contract's value: the person's or group's id).
  { name: 'entryUUID', aliases: [], oid: '1.3.6.1.1.16.4', matching: 'caseExact', operational: true },
  { name: 'createTimestamp', aliases: [], oid: '2.5.18.1', matching: 'generalizedTime', operational: true },
  { name: 'modifyTimestamp', aliases: [], oid: '2.5.18.2', matching: 'generalizedTime', operational: true },
  // The root DSE's (RFC 4512 §5.1): operational, so only returned when asked for.
  { name: 'namingContexts', aliases: [], oid: '1.3.6.1.4.1.1466.101.120.5', matching: 'dn', operational: true },
  { name: 'supportedLDAPVersion', aliases: [], oid: '1.3.6.1.4.1.1466.101.120.15', matching: 'integer', operational: true },
  { name: 'supportedExtension', aliases: [], oid: '1.3.6.1.4.1.1466.101.120.7', matching: 'oid', operational: true },
  { name: 'supportedControl', aliases: [], oid: '1.3.6.1.4.1.1466.101.120.13', matching: 'oid', operational: true },
  { name: 'supportedSASLMechanisms', aliases: [], oid: '1.3.6.1.4.1.1466.101.120.14', matching: 'caseIgnore', operational: true },
  { name: 'supportedFeatures', aliases: [], oid: '1.3.6.1.4.1.4203.1.3.5', matching: 'oid', operational: true },
  { name: 'vendorName', aliases: [], oid: '1.3.6.1.1.4', matching: 'caseExact', operational: true },
  { name: 'vendorVersion', aliases: [], oid: '1.3.6.1.1.5', matching: 'caseExact', operational: true },
];

const byKey = new Map<string, AttributeType>();
for (const type of TYPES) {
  for (const key of [type.name, ...type.aliases, type.oid]) byKey.set(key.toLowerCase(), type);
}

/**
 * The attribute type an attribute description names (a name, alias or OID, any case), or
 * undefined. A description with options (`cn;lang-de`) names nothing here: no value has options.
 */
export function attributeType(description: string): AttributeType | undefined {
  return byKey.get(description.toLowerCase());
}

/** RFC 4517 §3.3.13: a GeneralizedTime in UTC, to the second (`20260301100000Z`). */
export function generalizedTime(at: Date): string {
  return `${at.toISOString().slice(0, 19).replace(/[-:T]/g, '')}Z`;
}
