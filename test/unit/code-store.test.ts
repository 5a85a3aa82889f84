/**
 * The in-memory authorization-code store (server/oauth/authorize/code.ts): codes are found by
 * their value only, remembered for REMEMBER_MS after issue (so a replay is still caught after the
 * code expired), then forgotten; and never more than MAX_REMEMBERED at once, oldest first.
 */
import { describe, expect, it } from 'vitest';
import { CODE_TTL_MS, CodeStore, MAX_REMEMBERED, REMEMBER_MS, type NewCode } from '../../server/oauth/authorize/code.js';

const input: NewCode = {
  applicationId: 'notes', personId: 'usr_1', membershipId: 'mem_1', sessionId: 'ses_1',
  redirectUri: 'http://127.0.0.1:5173/callback', scope: 'openid', resource: 'https://notes.example.com/api',
  codeChallenge: null, nonce: null, authTime: new Date(0),
};
const at = (ms: number) => new Date(1_800_000_000_000 + ms);

describe('authorization-code store', () => {
  it('issues 256-bit base64url codes, finds them by value only, with a 60 s expiry', () => {
    const store = new CodeStore();
    const code = store.issue(input, at(0));
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(store.find(code, at(1))).toMatchObject({ ...input, issuedAt: at(0).getTime(), expiresAt: at(CODE_TTL_MS).getTime(), spent: false });
    expect(store.find(`${code}x`, at(1))).toBeUndefined();
    expect(store.find(store.issue(input, at(0)), at(1))).not.toBe(store.find(code, at(1)));
  });

  it('remembers a code for REMEMBER_MS after issue, then forgets it', () => {
    const store = new CodeStore();
    const code = store.issue(input, at(0));
    store.find(code, at(0))!.spent = true;
    expect(store.find(code, at(REMEMBER_MS - 1))?.spent).toBe(true);
    expect(store.find(code, at(REMEMBER_MS))).toBeUndefined();
    expect(store.size).toBe(0);
  });

  it(`holds at most ${MAX_REMEMBERED} codes, forgetting the oldest first`, () => {
    const store = new CodeStore();
    const first = store.issue(input, at(0));
    const second = store.issue(input, at(0));
    for (let i = 2; i < MAX_REMEMBERED; i++) store.issue(input, at(1));
    expect(store.size).toBe(MAX_REMEMBERED);
    expect(store.find(first, at(2))).toBeDefined();
    const newest = store.issue(input, at(2));
    expect(store.size).toBe(MAX_REMEMBERED);
    expect(store.find(first, at(2))).toBeUndefined();
    expect(store.find(second, at(2))).toBeDefined();
    expect(store.find(newest, at(2))).toBeDefined();
    expect(store.size).toBe(MAX_REMEMBERED);
  });
});
