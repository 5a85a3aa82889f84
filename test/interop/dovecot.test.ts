/**
 * Debian's Dovecot 2.3 (dovecot-imapd) checking access tokens by introspection (spec
 * claims-and-groups.md "Introspection"), with its OAuth2 password database left at its defaults —
 * `username_attribute = email`, which failed before with "No username returned" — and only the
 * introspection URL set, carrying the credentials of its own application (`imap`), which the
 * webmail application lists among its `resourceServers`. Dovecot runs in the foreground from a
 * configuration in a temporary directory on a free loopback port, and is stopped by its pid.
 * An IMAP client logs in with XOAUTH2 and OAUTHBEARER and the webmail's access token; a token of
 * another application and a token without the `email` scope are each refused. (The webmail no
 * longer listing the IMAP server is proven with Roundcube in presets-mail.test.ts.)
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as client from 'openid-client';
import { createClient, follow, signInCookie, signUpCookie, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { freePort } from '../helpers/free-port.js';

const REDIRECT = 'http://127.0.0.1:3000/callback';

let gatehouse: OAuthServer;
let dir: string;
let dovecot: ChildProcess | undefined;
let imapPort: number;
let webmailSecret: string;
let cookie: string;

/** The mail user Dovecot switches to: `nobody` when the test runs as root, else the test's own user. */
function mailUser(): { name: string; group: string; uid: number; gid: number } {
  if (process.getuid?.() !== 0) {
    const me = userInfo();
    return { name: me.username, group: spawnSync('id', ['-gn'], { encoding: 'utf8' }).stdout.trim(), uid: me.uid, gid: me.gid };
  }
  const id = (flag: string) => spawnSync('id', [flag, 'nobody'], { encoding: 'utf8' }).stdout.trim();
  return { name: 'nobody', group: id('-gn'), uid: Number(id('-u')), gid: Number(id('-g')) };
}

/** Dovecot's configuration: IMAP on `port` only, OAuth2 passdb by introspection, a static userdb. */
function writeConfig(port: number, introspectionUrl: string): string {
  const user = mailUser();
  const mail = join(dir, 'mail');
  mkdirSync(mail);
  chownSync(mail, user.uid, user.gid);
  const oauth2 = join(dir, 'dovecot-oauth2.conf.ext');
  // Only what points at Gatehouse: username_attribute, active_attribute and the rest stay Dovecot's defaults.
  writeFileSync(oauth2, `introspection_mode = post\nintrospection_url = ${introspectionUrl}\n`);
  chmodSync(oauth2, 0o600);
  const conf = join(dir, 'dovecot.conf');
  writeFileSync(conf, `
base_dir = ${join(dir, 'run')}
state_dir = ${join(dir, 'state')}
instance_name = gatehouse-interop-${port}
log_path = ${join(dir, 'dovecot.log')}
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = xoauth2 oauthbearer
# No pause after a refused login: the refusals are what this test checks.
auth_failure_delay = 0
# Say why a login failed (the test reads the reasons).
auth_verbose = yes
default_login_user = ${user.name}
default_internal_user = ${user.name}
default_internal_group = ${user.group}
first_valid_uid = ${Math.min(user.uid, 500)}
mail_location = maildir:${mail}/%u
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
passdb {
  driver = oauth2
  mechanisms = xoauth2 oauthbearer
  args = ${oauth2}
}
userdb {
  driver = static
  args = uid=${user.uid} gid=${user.gid} home=${mail}/%u
}
`);
  return conf;
}

/** Each session comes from another loopback address: Dovecot's penalty for failed logins grows per client address. */
let sessions = 0;

/** One IMAP session: the greeting, then `AUTHENTICATE <mechanism> <initial response>`; the tagged answer. */
function imapLogin(mechanism: 'XOAUTH2' | 'OAUTHBEARER', response: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port: imapPort, host: '127.0.0.1', localAddress: `127.0.0.${10 + ++sessions}` });
    let buffer = '';
    let sent = false;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`IMAP timed out: ${buffer}`));
    }, 20_000);
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      if (!sent && buffer.includes('\r\n')) {
        sent = true;
        socket.write(`a1 AUTHENTICATE ${mechanism} ${Buffer.from(response).toString('base64')}\r\n`);
      }
      // A failed SASL exchange may first send a continuation with the error JSON; answer it empty.
      if (/^\+ /m.test(buffer) && !buffer.includes('a1 ')) {
        buffer = buffer.replace(/^\+ .*\r\n/m, '');
        socket.write('\r\n');
      }
      const tagged = /^a1 (OK|NO|BAD)[^\r\n]*/m.exec(buffer);
      if (tagged) {
        clearTimeout(timer);
        socket.end('a2 LOGOUT\r\n');
        resolve(tagged[0]);
      }
    });
    socket.on('error', reject);
  });
}

const dovecotLog = () => readFileSync(join(dir, 'dovecot.log'), 'utf8');

const xoauth2 = (user: string, token: string) => imapLogin('XOAUTH2', `user=${user}\x01auth=Bearer ${token}\x01\x01`);
const oauthbearer = (user: string, token: string) => imapLogin('OAUTHBEARER', `n,a=${user},\x01auth=Bearer ${token}\x01\x01`);

/** A code flow of the webmail application; its access token. */
async function webmailToken(scope: string): Promise<string> {
  const config = await client.discovery(new URL(gatehouse.url), 'webmail', undefined, client.ClientSecretBasic(webmailSecret), { execute: [client.allowInsecureRequests] });
  const hop = await follow(client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope, state: 's' }), cookie);
  return (await client.authorizationCodeGrant(config, hop.location!, { expectedState: 's' })).access_token;
}

async function waitForImap(): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect(imapPort, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`Dovecot did not listen: ${readFileSync(join(dir, 'dovecot.log'), 'utf8')}`);
}

beforeAll(async () => {
  gatehouse = await startOAuthServer();
  const webmail = await createClient(gatehouse, { id: 'webmail', name: 'Webmail', audience: 'https://webmail.example.com', clientType: 'web', redirectUris: [REDIRECT] });
  const imap = await createClient(gatehouse, { id: 'imap', name: 'IMAP', audience: 'imap://mail.example.com', clientType: 'web', redirectUris: ['https://mail.example.com/'] });
  await createClient(gatehouse, { id: 'notes', name: 'Notes', audience: 'https://notes.example.com', clientType: 'web', redirectUris: [REDIRECT] });
  webmailSecret = webmail.clientSecret!;
  expect((await gatehouse.admin('PATCH', '/api/admin/applications/webmail', { resourceServers: ['imap'] })).status).toBe(200);
  cookie = await signUpCookie(gatehouse, 'ada@example.com', 'webmail');

  dir = mkdtempSync(join(tmpdir(), 'gatehouse-dovecot-'));
  chmodSync(dir, 0o755);
  imapPort = await freePort();
  const url = new URL('/api/auth/oauth2/introspect', gatehouse.url);
  url.username = 'imap';
  url.password = encodeURIComponent(imap.clientSecret!);
  const conf = writeConfig(imapPort, url.toString());
  dovecot = spawn('/usr/sbin/dovecot', ['-F', '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  await waitForImap();
});

afterAll(async () => {
  if (dovecot?.pid && dovecot.exitCode === null) {
    const exited = new Promise((resolve) => dovecot!.once('exit', resolve));
    dovecot.kill('SIGTERM');
    await exited;
  }
  await gatehouse?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('Dovecot (passdb oauth2, default username_attribute = email) against introspection', () => {
  it("logs in over IMAP with the webmail's access token, by XOAUTH2 and OAUTHBEARER", async () => {
    const token = await webmailToken('openid email offline_access');
    expect(await xoauth2('ada@example.com', token)).toMatch(/^a1 OK .*Logged in/);
    expect(await oauthbearer('ada@example.com', token)).toMatch(/^a1 OK .*Logged in/);
    // The address Gatehouse answered is the user: another one is refused.
    expect(await xoauth2('bob@example.com', token)).toMatch(/^a1 NO /);
  });

  it('refuses a token without the email scope, and a token of an application that does not list the IMAP server', async () => {
    expect(await xoauth2('ada@example.com', await webmailToken('openid offline_access'))).toMatch(/^a1 NO /);
    expect(dovecotLog()).toContain('oauth2 failed: Introspection failed: No username returned');
    const notesCookie = await signInCookie(gatehouse, 'ada@example.com', 'notes');
    const notesSecret = (await (await gatehouse.admin('POST', '/api/admin/applications/notes/client-secret')).json()) as { clientSecret: string };
    const config = await client.discovery(new URL(gatehouse.url), 'notes', undefined, client.ClientSecretBasic(notesSecret.clientSecret), { execute: [client.allowInsecureRequests] });
    const hop = await follow(client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid email', state: 'n' }), notesCookie);
    const foreign = (await client.authorizationCodeGrant(config, hop.location!, { expectedState: 'n' })).access_token;
    expect(await xoauth2('ada@example.com', foreign)).toMatch(/^a1 NO /);
    expect(dovecotLog()).toContain('oauth2 failed: Introspection failed: Provided token is not valid');
  });
});
