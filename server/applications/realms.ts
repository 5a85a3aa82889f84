/**
 * Sessions remember which realms (an application, or an SSO group) they signed in to
 * (accounts/session.ts). When an application or a group is deleted its marks go with it, in the
 * same transaction: otherwise an id created again later would find people already signed in to it.
 */
import { eq } from 'drizzle-orm';
import { sessionRealms } from '../db/schema.js';
import { realmOf } from '../accounts/session.js';
import type { Tx } from '../audit/record.js';

export function forgetApplicationRealm(tx: Tx, applicationId: string): void {
  tx.delete(sessionRealms).where(eq(sessionRealms.realm, realmOf({ id: applicationId, ssoGroupId: null }))).run();
}

export function forgetGroupRealm(tx: Tx, groupId: string): void {
  tx.delete(sessionRealms).where(eq(sessionRealms.realm, realmOf({ id: '', ssoGroupId: groupId }))).run();
}
