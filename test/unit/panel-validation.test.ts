/**
 * The panel's form rules and problem wording (renderer/src/validate.ts, renderer/src/api/problem.ts):
 * pure functions, checked here under Node; the browser suite checks them on the screens.
 */
import { describe, expect, it } from 'vitest';
import {
  backchannelLogoutUriErrors, emailListErrors, parseEmailLines, redirectUriErrors, redirectUriList, validEmails, webhookUrlErrors, clientIdErrors,
} from '../../renderer/src/validate.js';
import { ApiError, describeProblem, fieldErrors, fieldName } from '../../renderer/src/api/problem.js';

describe('redirect URIs, one per line', () => {
  it('never splits a line on spaces and names each problem by its line', () => {
    const text = 'https://a.example.com/cb\n\n  http://example.com/cb  \nhttps://a.example.com/cb x\nmyapp://cb\nhttps://a.example.com/cb';
    expect(redirectUriList(text)).toEqual(['https://a.example.com/cb', 'http://example.com/cb', 'https://a.example.com/cb x', 'myapp://cb', 'https://a.example.com/cb']);
    expect(redirectUriErrors(text, 'web')).toEqual([
      'Line 3: Http is allowed only for loopback or private-network hosts; use https.',
      'Line 4: Must not contain spaces.',
      'Line 5: Custom URI schemes are allowed only for native clients.',
      'Line 6: the same as line 1.',
    ]);
    expect(redirectUriErrors('myapp://cb\nhttp://127.0.0.1/cb', 'native')).toEqual([]);
    expect(redirectUriErrors('   \n', 'spa')).toEqual(['Add at least one redirect URI, one per line.']);
    expect(redirectUriErrors('https://x.example/#f', 'spa')).toEqual(['Line 1: Must not contain a fragment.']);
  });
});

describe('the back-channel logout URL', () => {
  it("follows the server's rule: https, http only on this network, no fragment or credentials", () => {
    for (const ok of ['', 'https://notes.example.com/logout', 'http://127.0.0.1:3000/logout', 'http://notes.lan/logout', 'http://10.0.0.5/l']) {
      expect(backchannelLogoutUriErrors(ok)).toEqual([]);
    }
    expect(backchannelLogoutUriErrors('http://notes.example.com/logout')).toEqual([
      'Plain http:// only reaches this network (localhost, a private address, *.lan, *.local); use https:// elsewhere.',
    ]);
    expect(backchannelLogoutUriErrors('https://notes.example.com/logout#x')).toEqual(['The address cannot contain a # fragment.']);
    expect(backchannelLogoutUriErrors('https://u:p@notes.example.com/logout')).toEqual(['The address cannot contain a user name or password.']);
    expect(backchannelLogoutUriErrors('notes.example.com/logout')).toEqual([
      'Enter an absolute https:// address (or http:// on this network), such as https://notes.example.com/auth/backchannel-logout.',
    ]);
  });
});

describe('pasted e-mail addresses', () => {
  it('keeps each entry with its line, reads "Name <address>", and marks what is not an address', () => {
    const entries = parseEmailLines('Ann <Ann@Example.com>, bob@example.com\n\nnot an address; cid@example.com\nann@example.com');
    expect(entries).toEqual([
      { line: 1, text: 'Ann <Ann@Example.com>', email: 'ann@example.com' },
      { line: 1, text: 'bob@example.com', email: 'bob@example.com' },
      { line: 3, text: 'not an address' },
      { line: 3, text: 'cid@example.com', email: 'cid@example.com' },
      { line: 4, text: 'ann@example.com', email: 'ann@example.com', duplicateOf: 1 },
    ]);
    expect(validEmails(entries)).toEqual(['ann@example.com', 'bob@example.com', 'cid@example.com']);
    expect(emailListErrors(entries)).toEqual(['Line 3: “not an address” is not an e-mail address.']);
  });
});

describe('other fields', () => {
  it('checks client ids and webhook URLs in words', () => {
    expect(clientIdErrors('Team Notes')).toEqual(['Use 2 to 63 characters: lower-case letters, digits, - and _, starting with a letter or digit.']);
    expect(clientIdErrors('team-notes')).toEqual([]);
    expect(webhookUrlErrors('')).toEqual([]);
    expect(webhookUrlErrors('notes.example.com/hook')).toEqual(['Enter an absolute http:// or https:// address, such as https://notes.example.com/hooks/gatehouse.']);
    expect(webhookUrlErrors('https://user:pw@notes.example.com/hook')).toEqual(['The address cannot contain a user name or password.']);
  });
});

describe('problem details in words', () => {
  it('names wire fields as people would, and gives a form its messages by field', () => {
    expect(fieldName('body.redirectUris.1')).toBe('Redirect URI on line 2');
    expect(fieldName('body.profile_fields.0.key')).toBe('Profile field 1: key');
    expect(fieldName('body.webhookUrl')).toBe('Webhook URL');
    expect(fieldName('querystring.someThing')).toBe('some thing');
    const problem = { detail: 'The request is not valid.', code: 'validation_failed', errors: [
      { path: 'body.redirectUris.1', message: 'must be an absolute URI' },
      { path: 'body.webhookUrl', message: 'must not point at a link-local, unspecified or multicast address' },
    ] };
    expect(describeProblem(400, problem)).toBe('The request is not valid. Redirect URI on line 2: must be an absolute URI; Webhook URL: must not point at a link-local, unspecified or multicast address');
    expect(fieldErrors(new ApiError(400, problem))).toEqual({
      redirectUris: ['Line 2: must be an absolute URI'],
      webhookUrl: ['Must not point at a link-local, unspecified or multicast address.'],
    });
    expect(fieldErrors(new Error('x'))).toEqual({});
  });
});
