/**
 * The LDAP presets for real (issue 37, item 5: "OpenLDAP's clients or nslcd for the LDAP
 * presets"), against Gatehouse's LDAP directory (GATEHOUSE_LDAP=on) on loopback:
 * - Jellyfin's LDAP plugin does not run here; what it does with its settings is done with
 *   OpenLDAP's ldapwhoami and ldapsearch (Debian ldap-utils), using exactly the settings of GET
 *   …/setup: bind as the service account, search the base with the search filter (only the
 *   group's members are found), bind as the person found with their app password;
 * - nslcd gets the nslcd.conf and nsswitch.conf of GET …/setup alone (password filled in), in a
 *   private mount namespace (`unshare -m`; /etc is never touched), and `getent`/`id` resolve the
 *   group's members through it.
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, adminJsonOf, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { freePort } from '../helpers/free-port.js';
import { fill, fromPreset, setupFile, setupSetting, signedInBrowser } from '../helpers/preset-interop.js';

let server: OAuthServer;
let dir: string;
const appPasswords: Record<string, string> = {};
const people: Record<string, string> = {};

/** A client run without blocking: Gatehouse answers it from this same process. */
function run(command: string, args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { encoding: 'utf8', timeout: 60_000, env: { PATH: '/usr/bin:/bin:/usr/sbin:/sbin' } }, (error, stdout, stderr) =>
      resolve({ status: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }));
  });
}

/** A member of the application with an app password for it (made by the person, on their account). */
async function member(appId: string, email: string) {
  const browser = await signedInBrowser(server, appId, email, []);
  const cookie = `gatehouse_session=${browser.cookie('127.0.0.1', 'gatehouse_session')}`;
  const res = await fetch(`${server.url}/api/me/app-passwords`, {
    method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: JSON.stringify({ applicationId: appId, name: 'TV' }),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  people[email] = browser.personId;
  appPasswords[`${appId}/${email}`] = ((await res.json()) as { password: string }).password;
}

beforeAll(async () => {
  const ldapPort = await freePort();
  server = await startOAuthServer({ GATEHOUSE_LDAP: 'on', GATEHOUSE_LDAP_PORT: String(ldapPort) });
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-presets-ldap-'));
  chmodSync(dir, 0o755);
  await adminJsonOf(server, 'POST', '/api/admin/groups', { id: 'media-users', name: 'Media users' });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('Jellyfin\'s LDAP plugin settings, done by OpenLDAP\'s clients', () => {
  it('binds as the service account, finds only the group\'s members with the search filter, and binds as them with their app password', async () => {
    const { app, setup } = await fromPreset(server, 'jellyfin-ldap', { baseUrl: 'http://127.0.0.1:8096', usersGroup: 'media-users' }, 'jellyfin');
    await member('jellyfin', 'ada@example.com');
    await member('jellyfin', 'bob@example.com');
    await adminJsonOf(server, 'PUT', `/api/admin/groups/media-users/members/${people['ada@example.com']}`);
    const url = `ldap://${setupSetting(setup, 'LDAP Server')}:${setupSetting(setup, 'LDAP Port')}`;
    const bindDn = setupSetting(setup, 'LDAP Bind User');
    const bindPassword = fill(setupSetting(setup, 'LDAP Bind User Password'), { ldapPassword: app.ldapPassword! });
    const base = setupSetting(setup, 'LDAP Base DN for searches');
    const filter = setupSetting(setup, 'LDAP Search Filter');
    expect(filter).toBe('(&(objectClass=inetOrgPerson)(memberOf=cn=media-users,ou=groups,dc=127,dc=0,dc=0,dc=1))'.replace('dc=127,dc=0,dc=0,dc=1', base.replace(/^ou=people,/, '')));

    const whoami = await run('ldapwhoami', ['-x', '-H', url, '-D', bindDn, '-w', bindPassword]);
    expect(whoami.stdout.trim(), `${url} ${whoami.stderr} ${JSON.stringify(setup.settings)}`).toBe(`dn:${bindDn}`);
    // The plugin's search for a login name: the filter, and the name in the search attributes (uid, mail).
    const find = (login: string) => run('ldapsearch', ['-x', '-LLL', '-H', url, '-D', bindDn, '-w', bindPassword, '-b', base, `(&${filter}(|(uid=${login})(mail=${login})))`, 'uid']);
    const ada = await find('ada');
    expect(ada.stdout, ada.stderr).toContain(`dn: uid=ada,${base}\nuid: ada\n`);
    expect((await find('ada@example.com')).stdout).toContain(`dn: uid=ada,${base}`);
    expect((await find('bob')).stdout.trim()).toBe(''); // a member of the application, not of the group
    const asAda = await run('ldapwhoami', ['-x', '-H', url, '-D', `uid=ada,${base}`, '-w', appPasswords['jellyfin/ada@example.com']!]);
    expect(asAda.stdout.trim(), asAda.stderr).toBe(`dn:uid=ada,${base}`);
    const withAccountPassword = await run('ldapwhoami', ['-x', '-H', url, '-D', `uid=ada,${base}`, '-w', PASSWORD]);
    expect(withAccountPassword.status).toBe(49);
    expect(withAccountPassword.stderr).toContain('Invalid credentials (49)');
  });
});

describe('nslcd, configured from the preset\'s set-up text', () => {
  it('resolves the group\'s members with getent and id in a private mount namespace', async () => {
    const { app, setup } = await fromPreset(server, 'nslcd', { baseUrl: 'https://server.lan.example', usersGroup: 'media-users' }, 'linux-hosts');
    await member('linux-hosts', 'dee@example.com');
    await member('linux-hosts', 'eve@example.com');
    await adminJsonOf(server, 'PUT', `/api/admin/groups/media-users/members/${people['dee@example.com']}`);
    writeFileSync(join(dir, 'nslcd.conf'), fill(setupFile(setup, 'nslcd.conf'), { ldapPassword: app.ldapPassword! }), { mode: 0o600 });
    writeFileSync(join(dir, 'nsswitch.conf'), `${setupFile(setup, 'nsswitch.conf')}shadow: files\nhosts: files\n`, { mode: 0o644 });
    // Inside the namespace only: a tmpfs on /run (nslcd's socket directory, and no nscd), the two files over /etc's.
    const script = [
      'set -e',
      'mount -t tmpfs tmpfs /run',
      'mkdir -p /run/nslcd && chown nslcd:nslcd /run/nslcd',
      `mount --bind ${dir}/nslcd.conf /etc/nslcd.conf`,
      `mount --bind ${dir}/nsswitch.conf /etc/nsswitch.conf`,
      'nslcd -d > /run/nslcd.log 2>&1 & nslcd=$!',
      'trap "kill $nslcd 2>/dev/null" EXIT',
      'for i in $(seq 1 100); do [ -S /run/nslcd/socket ] && break; sleep 0.1; done',
      'echo "== dee"; getent passwd dee | cut -d: -f1,6,7',
      'echo "== eve"; getent passwd eve || echo "exit $?"',
      'echo "== group"; getent group media-users | cut -d: -f1,4',
      // The user-private group (gid = the person's own number) has no name: `id` lists numbers and names.
      'echo "== id"; id dee | grep -o "(media-users)"',
    ].join('\n');
    const result = await run('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script]);
    expect(result.stderr).toBe('');
    // Eve is a member of the application but not of the group the preset's filter names.
    expect(result.stdout).toBe(['== dee', 'dee:/home/dee:/bin/sh', '== eve', 'exit 2', '== group', 'media-users:dee', '== id', '(media-users)', ''].join('\n'));
    expect(readFileSync('/etc/nsswitch.conf', 'utf8')).not.toContain('ldap');
    expect(existsSync('/run/nslcd/socket')).toBe(false);
  });
});
