/**
 * Every `gatehouse` sub-command, in the order `--help` lists them: its name, its one-line summary
 * and how to load it. Only this list is loaded to answer `gatehouse --help`; a command's module
 * (and the server code behind it) is imported when that command runs, so the help stays fast
 * (`npm run bench -- cli`). A new command is one line here and its own module.
 */
import type { CommandEntry } from './command.js';

export const commands: CommandEntry[] = [
  { name: 'serve', summary: 'run the identity server', load: async () => (await import('./serve.js')).serveCommand },
  {
    name: 'admin-token',
    summary: 'print the admin token from <data>/admin-token (--rotate replaces it)',
    load: async () => (await import('./admin-token.js')).adminTokenCommand,
  },
  {
    name: 'rotate-keys',
    summary: 'add new token-signing keys (RS256, ES256, EdDSA); the old ones stay published until their tokens expire',
    load: async () => (await import('./rotate-keys.js')).rotateKeysCommand,
  },
  { name: 'backup', summary: 'back up the database and TLS material while the server runs (encrypted)', load: async () => (await import('./backup.js')).backupCommand },
  {
    name: 'restore',
    summary: 'restore a backup file into a data directory (the server must be stopped)',
    load: async () => (await import('./restore.js')).restoreCommand,
  },
  {
    name: 'status',
    summary: 'show schema, counts, TLS expiry, backups, the retention sweeper, deletes under way and whether passkeys can work',
    load: async () => (await import('./status.js')).statusCommand,
  },
  // Headless administration: these talk to the running server's admin API.
  { name: 'setup', summary: 'first run: create the owner account (asks for the password)', load: async () => (await import('./admin/setup.js')).setup },
  { name: 'app list', summary: 'list the applications', load: async () => (await import('./admin/apps.js')).appList },
  { name: 'app create', summary: 'register an application, or one from an app preset with --preset (prints its client secret once)', load: async () => (await import('./admin/apps.js')).appCreate },
  { name: 'app setup', summary: 'print what to configure in the app (settings, files, notes; secrets as placeholders)', load: async () => (await import('./admin/presets.js')).appSetup },
  { name: 'preset list', summary: 'list the app presets and whether each is tested here or checked against its documentation', load: async () => (await import('./admin/presets.js')).presetList },
  { name: 'preset show', summary: "show a preset's inputs, what it sets, its Test sign-in checks and its sources", load: async () => (await import('./admin/presets.js')).presetShow },
  { name: 'app show', summary: "show one application's settings", load: async () => (await import('./admin/apps.js')).appShow },
  { name: 'app claims', summary: "show or change an application's claim settings (unknown scopes, groups filter, custom claims, resource servers)", load: async () => (await import('./admin/apps.js')).appClaims },
  { name: 'app update', summary: "change an application's settings (e.g. --signing-alg ES256)", load: async () => (await import('./admin/apps.js')).appUpdate },
  { name: 'app delete', summary: 'delete an application with its members, invitations and API keys', load: async () => (await import('./admin/apps.js')).appDelete },
  { name: 'app ldap', summary: "turn an application's LDAP directory access on or off, or make its service account a new password", load: async () => (await import('./admin/apps.js')).appLdap },
  { name: 'app radius', summary: "an application's RADIUS clients (each secret shown once), VLANs by group and default VLAN", load: async () => (await import('./admin/radius.js')).appRadius },
  { name: 'invite', summary: 'invite people to an application by e-mail', load: async () => (await import('./admin/members.js')).invite },
  { name: 'member list', summary: "list an application's members", load: async () => (await import('./admin/members.js')).memberList },
  { name: 'group list', summary: 'list the directory groups (--query: id prefix)', load: async () => (await import('./admin/groups.js')).groupList },
  { name: 'group create', summary: 'create a directory group', load: async () => (await import('./admin/groups.js')).groupCreate },
  { name: 'group show', summary: 'show a directory group and its members', load: async () => (await import('./admin/groups.js')).groupShow },
  { name: 'group delete', summary: 'delete a directory group (refused while an application setting names it)', load: async () => (await import('./admin/groups.js')).groupDelete },
  { name: 'group add', summary: 'put people (by e-mail) in a directory group', load: async () => (await import('./admin/groups.js')).groupAdd },
  { name: 'group remove', summary: 'take people (by e-mail) out of a directory group', load: async () => (await import('./admin/groups.js')).groupRemove },
  { name: 'directory list', summary: 'list the directory sources (LDAP, Active Directory) with their status', load: async () => (await import('./admin/directory.js')).directoryList },
  { name: 'directory show', summary: "show a directory source's settings and status", load: async () => (await import('./admin/directory.js')).directoryShow },
  { name: 'directory add', summary: 'connect an LDAP directory or Active Directory as a source of people (the bind password from a file or standard input)', load: async () => (await import('./admin/directory.js')).directoryAdd },
  { name: 'directory test', summary: 'test a directory source step by step (--username: look one up)', load: async () => (await import('./admin/directory.js')).directoryTest },
  { name: 'directory sync', summary: 'start a sync run of a directory source (--wait: print what it did)', load: async () => (await import('./admin/directory.js')).directorySync },
  { name: 'directory runs', summary: "a directory source's runs, with the latest one's conflicts and skipped entries", load: async () => (await import('./admin/directory.js')).directoryRuns },
  { name: 'directory link', summary: 'link a person (by e-mail) to their entry in a directory source (their own password is deleted)', load: async () => (await import('./admin/directory.js')).directoryLink },
  { name: 'config export', summary: 'print the configuration as one YAML document (--out FILE to write it)', load: async () => (await import('./admin/config.js')).configExport },
  {
    name: 'config apply',
    summary: 'apply a configuration file: the plan, then every change in one transaction (--dry-run, --prune)',
    load: async () => (await import('./admin/config.js')).configApply,
  },
  { name: 'key rotate', summary: 'publish new signing keys on the running server (they sign two minutes later)', load: async () => (await import('./admin/keys.js')).keyRotate },
  { name: 'tls renew-ca', summary: "replace the LAN mode's local CA on the running server (devices install the new one)", load: async () => (await import('./admin/tls.js')).tlsRenewCa },
];
