/**
 * Sessions remember which realms (an application, or an SSO group) they signed in to
 * (accounts/session.ts). When an application or a group is deleted its marks must go too:
 * otherwise an id created again later would find people already signed in to it. There can be as
 * many marks as sessions, so they go in the background purge (data-lifecycle/purge-plans.ts),
 * which keeps the id taken until they are gone; these name the realm for it.
 */
import { realmOf } from '../accounts/session.js';

export const applicationRealm = (applicationId: string) => realmOf({ id: applicationId, ssoGroupId: null });
export const groupRealm = (groupId: string) => realmOf({ id: '', ssoGroupId: groupId });
