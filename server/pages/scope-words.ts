/** What each OAuth scope means, in words a person can judge (device, consent and account pages). */
import type { Translate } from '../i18n/index.js';

const KNOWN = new Set(['openid', 'profile', 'email', 'groups', 'offline_access']);
/** Granted with no claims (Gatehouse holds no address or telephone number): nothing to approve. */
const SHARES_NOTHING = new Set(['address', 'phone']);

export function scopeWords(t: Translate, scope: string): string[] {
  return scope
    .split(' ')
    .filter((s) => s && !SHARES_NOTHING.has(s))
    .map((s) => (KNOWN.has(s) ? t(`scopes.${s}`) : s.replace(/[&<>"']/g, '')));
}
