/**
 * The LDAP directory's line in `gatehouse status` (plugin-api/registries.ts `RecordedStatus`): the
 * listener's state as the server recorded it in `meta` when it started (server.ts), read without
 * a server. A module of its own, so the command loads nothing else of the directory.
 */
import type { RecordedStatus } from '../plugin-api/registries.js';

/** Where the listener's state is recorded for `gatehouse status` (a process without the server). */
export const LDAP_STATE_KEY = 'ldap.listener';

/** What `gatehouse status` and the control panel show about the listener. */
export interface LdapState {
  enabled: boolean;
  /** `ldap://host:port`, when listening. */
  url: string | null;
  /** `ldaps://host:port`, when LAN TLS is on. */
  ldapsUrl: string | null;
  startTls: boolean;
  baseDn: string | null;
  allowPlain: boolean;
}

/**
 * The LDAP listener as the server recorded it when it started; `running` says whether that server
 * runs now (undefined where it cannot be told: PostgreSQL mode, the last instance to start).
 */
export function ldapLine(ldap: LdapState | null, running: boolean | undefined): string {
  if (!ldap) return 'not recorded yet (no server of this version has run here)';
  if (!ldap.enabled) return 'off (GATEHOUSE_LDAP=on or --ldap turns it on)';
  const urls = [ldap.url, ldap.ldapsUrl].filter(Boolean).join(' and ');
  const when = running === undefined ? 'on (as the last instance to start recorded it)' : running ? 'on' : 'on when the server last ran';
  return `${when}: ${urls}${ldap.startTls ? ' (StartTLS)' : ''}, base ${ldap.baseDn}${ldap.allowPlain ? ', plain binds allowed from other machines' : ''}`;
}

export const ldapStatus: RecordedStatus = {
  name: 'ldap',
  label: 'LDAP',
  metaKey: LDAP_STATE_KEY,
  line: (recorded, running) => ldapLine(recorded as LdapState | null, running),
};
