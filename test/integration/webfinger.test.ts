/**
 * WebFinger (RFC 7033, OIDC Discovery 1.0 §2; spec claims-and-groups.md): the issuer link for any
 * address, the same answer whether or not the address has an account, `rel` filtering, CORS, and
 * 400 naming `query.resource` for a missing, repeated or malformed resource.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from '../helpers/app.js';
import { signUp } from '../helpers/accounts.js';
import { createApplication } from '../helpers/accounts.js';

const ISSUER_REL = 'http://openid.net/specs/connect/1.0/issuer';
let t: TestApp;

beforeAll(async () => {
  t = await makeApp({ perFile: true });
  await createApplication(t, { id: 'notes', name: 'Notes', audience: 'https://notes.example.com', clientType: 'spa', redirectUris: ['http://127.0.0.1:5173/cb'], authPolicy: { signup_policy: 'open' } });
  expect((await signUp(t, { email: 'ada@example.com', name: 'Ada', applicationId: 'notes' })).statusCode).toBe(201);
});

const finger = (query: string) => t.app.inject({ method: 'GET', url: `/.well-known/webfinger?${query}` });

describe('GET /.well-known/webfinger', () => {
  it('answers the issuer link as application/jrd+json with CORS, the same for a known and an unknown address', async () => {
    const answers = [];
    for (const address of ['ada@example.com', 'bob@example.com']) {
      const res = await finger(`resource=${encodeURIComponent(`acct:${address}`)}&rel=${encodeURIComponent(ISSUER_REL)}`);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/jrd+json; charset=utf-8');
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.json()).toEqual({ subject: `acct:${address}`, links: [{ rel: ISSUER_REL, href: t.config.issuer }] });
      answers.push({ headers: { ...res.headers, date: undefined }, body: res.body.replace(address, 'X') });
    }
    expect(answers[0]).toEqual(answers[1]);
  });

  it('takes an http(s) URL as resource, and filters links by rel', async () => {
    const url = await finger(`resource=${encodeURIComponent('https://example.com/joe')}`);
    expect(url.json()).toEqual({ subject: 'https://example.com/joe', links: [{ rel: ISSUER_REL, href: t.config.issuer }] });
    const other = await finger(`resource=acct:ada@example.com&rel=${encodeURIComponent('http://webfinger.net/rel/avatar')}`);
    expect(other.statusCode).toBe(200);
    expect(other.json()).toEqual({ subject: 'acct:ada@example.com', links: [] });
    const both = await finger(`resource=acct:ada@example.com&rel=x&rel=${encodeURIComponent(ISSUER_REL)}`);
    expect(both.json().links).toEqual([{ rel: ISSUER_REL, href: t.config.issuer }]);
  });

  it('answers 400 problem+json naming query.resource for a missing, repeated or malformed resource, with CORS', async () => {
    for (const [query, message] of [
      ['', 'is required'],
      ['resource=', 'is required'],
      ['resource=acct:a@b&resource=acct:c@d', 'must be given once'],
      ['resource=ada@example.com', 'must be an acct: URI (acct:user@host) or an absolute http(s) URL'],
      ['resource=acct:ada', 'must be an acct: URI (acct:user@host) or an absolute http(s) URL'],
      ['resource=acct:@example.com', 'must be an acct: URI (acct:user@host) or an absolute http(s) URL'],
      ['resource=mailto:ada@example.com', 'must be an acct: URI (acct:user@host) or an absolute http(s) URL'],
      [`resource=acct:${'a'.repeat(1100)}@example.com`, 'must be an acct: URI (acct:user@host) or an absolute http(s) URL'],
    ]) {
      const res = await finger(query!);
      expect(res.statusCode, query).toBe(400);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: 'query.resource', message }] });
    }
  });
});
