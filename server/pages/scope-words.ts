/** What each OAuth scope means, in words a person can judge (device, consent and account pages). */
import type { Translate } from '../i18n/index.js';

const KNOWN = new Set(['openid', 'profile', 'email', 'offline_access']);

export function scopeWords(t: Translate, scope: string): string[] {
  return scope
    .split(' ')
    .filter(Boolean)
    .map((s) => (KNOWN.has(s) ? t(`scopes.${s}`) : s.replace(/[&<>"']/g, '')));
}
