/**
 * `gatehouse directory list | show | add | test | sync | runs | link`: directory sources through
 * the running server's admin API (spec directory-sources.md; docs/directory-sources.md). The bind
 * password never goes on the command line (`ps` shows it): `--bind-password-file FILE`, or typed
 * on standard input with `--bind-password-stdin`.
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from '../../config.js';
import { adminCommand, listAll, type AdminClient } from '../admin-client.js';
import { bodyFromFlags, type FlagTable } from '../flags.js';
import { formatFields, formatTable, printJson } from '../output.js';

interface Source {
  id: string;
  name: string;
  kind: string;
  url: string;
  bindDn: string | null;
  bindPasswordSet: boolean;
  peopleBase: string;
  groupsBase: string | null;
  syncIntervalMinutes: number | null;
  applications: string[];
  status: string;
  lastSyncAt: string | null;
  lastError: string | null;
  people: number;
}

interface Run {
  id: string;
  state: string;
  full: boolean;
  trigger: string;
  counts: Record<string, number>;
  conflicts: { dn: string; email: string | null; username: string | null }[];
  skipped: { dn: string; reason: string }[];
  error: string | null;
  startedAt: string;
  finishedAt: string | null;
}

const path = (id: string) => `/api/admin/directory-sources/${encodeURIComponent(id)}`;
const oneSource = (example: string) => ({ usage: 'SOURCE', min: 1, max: 1, missing: `Give one source id (see \`gatehouse directory list\`), e.g. \`gatehouse directory ${example}\`.` });
const counts = (c: Record<string, number>) => `created ${c.created}, updated ${c.updated}, disabled ${c.disabled}, enabled ${c.enabled}, skipped ${c.skipped}, conflicts ${c.conflicts}`;

export const directoryList = adminCommand({
  async run({ client, json }) {
    const sources = await listAll<Source>(client, '/api/admin/directory-sources', 'directorySources');
    if (json) return printJson({ directorySources: sources });
    if (!sources.length) return console.log('No directory sources. Connect one with `gatehouse directory add` (docs/directory-sources.md).');
    console.log(formatTable(['ID', 'NAME', 'KIND', 'URL', 'PEOPLE', 'STATUS', 'LAST SYNC'], sources.map((s) => [s.id, s.name, s.kind, s.url, String(s.people), s.status, s.lastSyncAt ?? 'never'])));
  },
});

export const directoryShow = adminCommand({
  positionals: oneSource('show dsrc_…'),
  async run({ client, positionals, json }) {
    const s = await client.request<Source>('GET', path(positionals[0]!));
    if (json) return printJson(s);
    console.log(formatFields([
      ['ID', s.id], ['Name', s.name], ['Kind', s.kind], ['URL', s.url], ['Bind DN', s.bindDn ?? '(anonymous)'],
      ['Bind password', s.bindPasswordSet ? 'set' : 'not set'], ['People base', s.peopleBase], ['Groups base', s.groupsBase ?? '(groups not read)'],
      ['Sync every', s.syncIntervalMinutes === null ? 'manual only' : `${s.syncIntervalMinutes} minutes`], ['Applications', s.applications.join(', ') || '(none)'],
      ['People', String(s.people)], ['Status', s.status], ['Last sync', s.lastSyncAt ?? 'never'], ['Last error', s.lastError ?? '(none)'],
    ]));
  },
});

const addFlags: FlagTable = {
  name: { type: 'string', value: 'NAME', help: 'what the panel and sign-in errors call it', field: 'name' },
  kind: { type: 'string', value: 'ldap|active_directory', help: 'the dialect (default ldap)', field: 'kind' },
  url: { type: 'string', value: 'URL', help: 'ldaps://host[:port], or ldap://host[:port] (StartTLS)', field: 'url' },
  'no-start-tls': { type: 'boolean', help: 'plain ldap:// without StartTLS (to this machine, or with --allow-plain)' },
  'allow-plain': { type: 'boolean', help: 'allow plain LDAP to another machine' },
  'ca-file': { type: 'string', value: 'FILE', help: "the PEM CA certificate that signed the directory's certificate" },
  'bind-dn': { type: 'string', value: 'DN', help: 'the service account (none: anonymous)', field: 'bindDn' },
  'bind-password-file': { type: 'string', value: 'FILE', help: "a file holding the service account's password" },
  'bind-password-stdin': { type: 'boolean', help: "read the service account's password from standard input" },
  'people-base': { type: 'string', value: 'DN', help: 'where people are', field: 'peopleBase' },
  'people-filter': { type: 'string', value: 'FILTER', help: 'which entries are people (default by kind)', field: 'peopleFilter' },
  'groups-base': { type: 'string', value: 'DN', help: 'where groups are (none: groups are not read)', field: 'groupsBase' },
  'disabled-filter': { type: 'string', value: 'FILTER', help: 'people matching it are disabled here', field: 'disabledFilter' },
  'sync-every': { type: 'string', value: 'MINUTES|manual', help: 'minutes between scheduled runs, 5–1440 (default 60)' },
  application: { type: 'string', multiple: true, value: 'ID', help: 'an application its people join (repeat for several)' },
};

async function stdinText(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

export const directoryAdd = adminCommand({
  flags: addFlags,
  async run({ client, values, json }) {
    if (!values.name || !values.url || !values['people-base']) {
      throw new ConfigError('Give at least --name, --url and --people-base, e.g. `gatehouse directory add --name "Office LDAP" --url ldaps://ldap.office.example --people-base ou=people,dc=office,dc=example`.');
    }
    const body: Record<string, unknown> = { kind: 'ldap', ...bodyFromFlags(addFlags, values) };
    if (values['no-start-tls']) body.startTls = false;
    if (values['allow-plain']) body.allowPlain = true;
    if (typeof values['ca-file'] === 'string') body.caCertificate = readFileSync(values['ca-file'], 'utf8');
    if (typeof values['bind-password-file'] === 'string') body.bindPassword = readFileSync(values['bind-password-file'], 'utf8').replace(/\r?\n$/, '');
    else if (values['bind-password-stdin']) body.bindPassword = await stdinText();
    const every = values['sync-every'];
    if (typeof every === 'string') body.syncIntervalMinutes = every === 'manual' ? null : Number(every);
    if (Array.isArray(values.application)) body.applications = values.application;
    const source = await client.request<Source>('POST', '/api/admin/directory-sources', body);
    if (json) return printJson(source);
    console.log(`Connected ${source.name} (${source.id}). Check it with \`gatehouse directory test ${source.id}\`, then \`gatehouse directory sync ${source.id}\`.`);
  },
});

export const directoryTest = adminCommand({
  flags: { username: { type: 'string', value: 'NAME', help: 'also look this username (or e-mail) up' } },
  positionals: oneSource('test dsrc_…'),
  async run({ client, values, positionals, json }) {
    const result = await client.request<{ ok: boolean; steps: { step: string; ok: boolean; error?: string }[]; people: number | null; groups: number | null; sample: { dn: string; person: { username: string; email: string } | null; skipped: string | null }[]; lookup?: { found: boolean; person?: { dn: string; username: string; email: string } } }>(
      'POST', `${path(positionals[0]!)}/test`, typeof values.username === 'string' ? { username: values.username } : {});
    if (json) return printJson(result);
    for (const s of result.steps) console.log(`${s.ok ? 'ok  ' : 'FAIL'} ${s.step}${s.error ? `: ${s.error}` : ''}`);
    if (result.people !== null) console.log(`\n${result.people} people${result.groups !== null ? `, ${result.groups} groups` : ''}.`);
    if (result.sample.length) console.log(formatTable(['DN', 'USERNAME', 'E-MAIL / SKIPPED'], result.sample.map((e) => [e.dn, e.person?.username ?? '', e.person?.email ?? `skipped: ${e.skipped}`])));
    if (result.lookup) console.log(result.lookup.found ? `\nFound ${result.lookup.person!.dn} (${result.lookup.person!.username}, ${result.lookup.person!.email}).` : '\nThe username finds no one.');
    if (!result.ok) process.exitCode = 1;
  },
});

async function waitFor(client: AdminClient, sourceId: string, runId: string): Promise<Run> {
  for (;;) {
    const run = await client.request<Run>('GET', `${path(sourceId)}/runs/${encodeURIComponent(runId)}`);
    if (run.state !== 'running') return run;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

function printRun(run: Run): void {
  console.log(`${run.id}: ${run.state} (${run.full ? 'full' : 'changes only'}), ${counts(run.counts)}${run.error ? `\n${run.error}` : ''}`);
  if (run.conflicts.length) console.log(`\nConflicts (the same person? \`gatehouse directory link EMAIL --source SOURCE\`):\n${formatTable(['DN', 'E-MAIL', 'USERNAME'], run.conflicts.map((c) => [c.dn, c.email ?? '', c.username ?? '']))}`);
  if (run.skipped.length) console.log(`\nSkipped:\n${formatTable(['DN', 'REASON'], run.skipped.map((s) => [s.dn, s.reason]))}`);
}

export const directorySync = adminCommand({
  flags: {
    'changes-only': { type: 'boolean', help: 'read only what changed since the last run (where the directory offers it)' },
    wait: { type: 'boolean', help: 'wait for the run to end and print what it did' },
  },
  positionals: oneSource('sync dsrc_… --wait'),
  async run({ client, values, positionals, json }) {
    const id = positionals[0]!;
    const { run } = await client.request<{ run: Run }>('POST', `${path(id)}/sync`, { full: values['changes-only'] !== true });
    const done = values.wait ? await waitFor(client, id, run.id) : run;
    if (json) return printJson(done);
    if (!values.wait) return console.log(`Started run ${run.id}; see it with \`gatehouse directory runs ${id}\`.`);
    printRun(done);
    if (done.state === 'failed') process.exitCode = 1;
  },
});

export const directoryRuns = adminCommand({
  positionals: oneSource('runs dsrc_…'),
  async run({ client, positionals, json }) {
    const page = await client.request<{ runs: Run[] }>('GET', `${path(positionals[0]!)}/runs?limit=20`);
    if (json) return printJson(page);
    if (!page.runs.length) return console.log('No runs yet.');
    console.log(formatTable(['RUN', 'STARTED', 'STATE', 'KIND', 'COUNTS'], page.runs.map((r) => [r.id, r.startedAt, r.state, r.full ? 'full' : 'changes', counts(r.counts)])));
    const last = page.runs[0]!;
    if (last.conflicts.length || last.skipped.length || last.error) {
      console.log('\nThe latest run:');
      printRun(last);
    }
  },
});

export const directoryLink = adminCommand({
  flags: { source: { type: 'string', value: 'SOURCE', help: 'the source whose entry this person is' } },
  positionals: { usage: 'EMAIL', min: 1, max: 1, missing: 'Give the person\'s e-mail address, e.g. `gatehouse directory link ann@example.com --source dsrc_…`.' },
  async run({ client, values, positionals, json }) {
    if (typeof values.source !== 'string') throw new ConfigError('Give the source with --source (see `gatehouse directory list`).');
    const wanted = positionals[0]!.trim().toLowerCase();
    const page = await client.request<{ people: { id: string; email: string }[] }>('GET', `/api/admin/people?${new URLSearchParams({ q: wanted, limit: '200' })}`);
    const person = page.people.find((p) => p.email === wanted);
    if (!person) throw new ConfigError(`Nobody has the e-mail address ${wanted} (person_not_found).`);
    const linked = await client.request<{ email: string; source: { dn: string } }>('POST', `/api/admin/people/${encodeURIComponent(person.id)}/directory-link`, { sourceId: values.source });
    if (json) return printJson(linked);
    console.log(`Linked ${linked.email} to ${linked.source.dn}: they sign in with the directory's password from now on.`);
  },
});
