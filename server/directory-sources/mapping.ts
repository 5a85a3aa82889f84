/**
 * From a source entry to what Gatehouse keeps (spec directory-sources.md, "Sync"): the mapped
 * person or group, or the reason the entry is skipped. The rules are the people rules of
 * claims-and-groups.md: a username `^[a-z0-9][a-z0-9._-]{0,63}$` (lower-cased), a valid e-mail
 * address, names as display text (cleaned, not refused: the source decides them) within their
 * lengths. An entry over 64 KB is skipped whole. Nothing here touches the database.
 */
import { createHash } from 'node:crypto';
import type { Entry } from 'ldapts';
import type { DirectoryAttributes, DirectorySourceKind } from '../db/schema.js';
import { isEmailAddress } from '../util/email.js';
import { cleanDisplayText, displayTextProblem } from '../util/display-text.js';
import { guidToString, UAC_ACCOUNT_DISABLE } from './defaults.js';

/** Bytes an entry may have (its DN and every value), spec: 64 KB. */
export const MAX_ENTRY_BYTES = 64 * 1024;
const USERNAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
export const GROUP_ID = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const NAME_LIMITS = { name: 200, givenName: 100, familyName: 100 } as const;

export interface MappedPerson {
  key: string;
  dn: string;
  username: string;
  email: string;
  name: string | null;
  givenName: string | null;
  familyName: string | null;
  /** AD's userAccountControl says disabled. */
  disabledAtSource: boolean;
  /** modifyTimestamp / uSNChanged, when read. */
  changeMark: string | undefined;
  /** What was mapped, hashed: equal digests mean nothing to write. */
  digest: string;
}

export interface MappedGroup {
  key: string;
  dn: string;
  id: string;
  name: string;
  /** Member DNs (member, uniqueMember) and usernames (memberUid). */
  memberDns: string[];
  memberUids: string[];
  changeMark: string | undefined;
}

export type Mapped<T> = { ok: true; value: T } | { ok: false; dn: string; reason: string };

/** The entry's size in bytes: its DN and every value. */
export function entrySize(entry: Entry): number {
  let size = Buffer.byteLength(entry.dn);
  for (const [name, value] of Object.entries(entry)) {
    if (name === 'dn') continue;
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) size += typeof v === 'string' ? Buffer.byteLength(v) : v.length;
  }
  return size;
}

/** An attribute's values as text (case-insensitive name, as LDAP's are). */
function values(entry: Entry, name: string): string[] {
  const key = name in entry ? name : Object.keys(entry).find((k) => k.toLowerCase() === name.toLowerCase());
  if (key === undefined) return [];
  const value = entry[key]!;
  const list = Array.isArray(value) ? value : [value];
  return list.map((v) => (typeof v === 'string' ? v : v.toString('utf8')));
}

function first(entry: Entry, name: string): string | undefined {
  return values(entry, name)[0];
}

/** The entry's stable key: objectGUID as a GUID string, entryUUID (or any other) lower-cased. */
export function entryKey(entry: Entry, attribute: string): string | undefined {
  const key = attribute in entry ? attribute : Object.keys(entry).find((k) => k.toLowerCase() === attribute.toLowerCase());
  if (key === undefined) return undefined;
  const raw = entry[key]!;
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined) return undefined;
  if (Buffer.isBuffer(value)) return value.length === 16 ? guidToString(value) : value.length ? value.toString('hex') : undefined;
  const text = value.trim().toLowerCase();
  return text.length > 0 && text.length <= 200 ? text : undefined;
}

/** Display text as the source wrote it, made safe to show: cleaned only when it needs it (the check is cheaper). */
function displayText(raw: string): string {
  return displayTextProblem(raw) === undefined ? raw.replace(/\s+/g, ' ').trim() : cleanDisplayText(raw);
}

function name(entry: Entry, attribute: string, limit: number): string | null {
  const raw = first(entry, attribute);
  if (raw === undefined) return null;
  const cleaned = displayText(raw);
  if (!cleaned) return null;
  return Array.from(cleaned).slice(0, limit).join('');
}

const digestOf = (parts: unknown[]) => createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 22);

/** The attributes a people search asks for. */
export function personAttributes(attributes: DirectoryAttributes, kind: DirectorySourceKind, changeAttribute: string): string[] {
  const list = [attributes.id, attributes.username, attributes.email, attributes.name, attributes.givenName, attributes.familyName, changeAttribute];
  if (kind === 'active_directory') list.push('userAccountControl');
  return [...new Set(list)];
}

export function mapPerson(entry: Entry, attributes: DirectoryAttributes, kind: DirectorySourceKind, changeAttribute: string): Mapped<MappedPerson> {
  const dn = entry.dn;
  if (entrySize(entry) > MAX_ENTRY_BYTES) return { ok: false, dn, reason: `the entry is larger than ${MAX_ENTRY_BYTES / 1024} KB` };
  const key = entryKey(entry, attributes.id);
  if (!key) return { ok: false, dn, reason: `no ${attributes.id} (the key)` };
  const rawUsername = first(entry, attributes.username)?.trim().toLowerCase();
  if (!rawUsername) return { ok: false, dn, reason: `no ${attributes.username} (the username)` };
  if (!USERNAME.test(rawUsername)) return { ok: false, dn, reason: `the username "${cleanDisplayText(rawUsername).slice(0, 80)}" is not valid here (a-z, 0-9, . _ -, at most 64)` };
  const email = first(entry, attributes.email)?.trim().toLowerCase();
  if (!email) return { ok: false, dn, reason: `no ${attributes.email} (the e-mail address)` };
  if (!isEmailAddress(email)) return { ok: false, dn, reason: `the e-mail address "${cleanDisplayText(email).slice(0, 80)}" is not valid` };
  const uac = kind === 'active_directory' ? Number(first(entry, 'userAccountControl') ?? '0') : 0;
  const disabledAtSource = Number.isFinite(uac) && (uac & UAC_ACCOUNT_DISABLE) !== 0;
  const mapped = {
    key, dn, username: rawUsername, email,
    name: name(entry, attributes.name, NAME_LIMITS.name) ?? name(entry, 'cn', NAME_LIMITS.name),
    givenName: name(entry, attributes.givenName, NAME_LIMITS.givenName),
    familyName: name(entry, attributes.familyName, NAME_LIMITS.familyName),
    disabledAtSource,
  };
  return {
    ok: true,
    value: {
      ...mapped,
      changeMark: first(entry, changeAttribute),
      digest: digestOf([mapped.dn, mapped.username, mapped.email, mapped.name, mapped.givenName, mapped.familyName]),
    },
  };
}

/** Bytes a group entry may have: its member list makes it large (a 10,000-member group is ~600 KB). */
export const MAX_GROUP_ENTRY_BYTES = 16 * 1024 * 1024;

export function groupAttributes(attributes: DirectoryAttributes, changeAttribute: string): string[] {
  return [...new Set([attributes.id, attributes.groupName, ...(attributes.nestedMembers ? [] : attributes.members), changeAttribute])];
}

export function mapGroup(entry: Entry, attributes: DirectoryAttributes, changeAttribute: string): Mapped<MappedGroup> {
  const dn = entry.dn;
  if (entrySize(entry) > MAX_GROUP_ENTRY_BYTES) return { ok: false, dn, reason: `the entry is larger than ${MAX_GROUP_ENTRY_BYTES / 1024 / 1024} MB` };
  const key = entryKey(entry, attributes.id);
  if (!key) return { ok: false, dn, reason: `no ${attributes.id} (the key)` };
  const rawName = first(entry, attributes.groupName)?.trim();
  if (!rawName) return { ok: false, dn, reason: `no ${attributes.groupName} (the group's name)` };
  const id = rawName.toLowerCase().replace(/\s+/g, '-');
  if (!GROUP_ID.test(id)) return { ok: false, dn, reason: `the group name "${cleanDisplayText(rawName).slice(0, 80)}" does not make a valid group id (a-z, 0-9, . _ -, at most 64)` };
  const memberDns: string[] = [];
  const memberUids: string[] = [];
  if (!attributes.nestedMembers) {
    for (const attribute of attributes.members) {
      // memberUid (posixGroup) names usernames; member and uniqueMember name DNs (uniqueMember may carry `#'0101'B`, RFC 4517 §3.3.21).
      if (attribute.toLowerCase() === 'memberuid') memberUids.push(...values(entry, attribute).map((v) => v.trim().toLowerCase()));
      else memberDns.push(...values(entry, attribute).map((v) => v.replace(/#'[01]*'B$/, '')));
    }
  }
  return {
    ok: true,
    value: { key, dn, id, name: Array.from(displayText(rawName)).slice(0, 200).join('') || id, memberDns, memberUids, changeMark: first(entry, changeAttribute) },
  };
}

/**
 * DNs as keys: case-insensitive, spaces after separators ignored (RFC 4514 §2 leaves them out,
 * servers write them either way). Good enough to match a group's `member` values against the
 * people's DNs as the same server wrote them.
 */
export function dnKey(dn: string): string {
  return dn.trim().toLowerCase().replace(/\s*([,=+])\s*/g, '$1');
}
