/**
 * Directory sources (spec directory-sources.md, "Panel"): an Active Directory or LDAP directory
 * whose people and groups Gatehouse mirrors. The list and the connect form; one source's page with
 * its settings and attribute mapping, Test (each step, mapped samples, a username lookup), Sync now,
 * the runs, the latest run's conflicts (each with Link) and skipped entries, and Delete.
 */
import { createResource, createSignal, For, Show } from 'solid-js';
import { A, useNavigate, useParams } from '@solidjs/router';
import { client, enc, fieldErrors, ok, type Ok } from '../../api';
import { Async, confirmAction, ErrorBox, Field, ListTable, toast, useAction, when } from '../../ui';

type Source = Ok<'/api/admin/directory-sources/{id}', 'get'>;
type Run = Ok<'/api/admin/directory-sources/{id}/runs/{runId}', 'get'>;
type TestResult = Ok<'/api/admin/directory-sources/{id}/test', 'post'>;

const t = {
  title: 'Directory',
  intro: 'People and groups from an Active Directory, OpenLDAP or a NAS’s directory. Their passwords stay there: Gatehouse checks them by binding as the person. Second factors and each application’s rules stay Gatehouse’s.',
  table: 'Directory sources',
  columns: ['Source', 'Kind', 'Address', 'People', 'Status', 'Last sync'],
  empty: 'No directory connected. Connect one below.',
  kinds: { ldap: 'LDAP', active_directory: 'Active Directory' } as Record<string, string>,
  connect: 'Connect a directory',
  name: 'Name',
  kind: 'Kind',
  url: 'Address',
  urlHint: 'ldaps://dc1.corp.example:636, or ldap://…:389 with StartTLS.',
  startTls: 'Upgrade ldap:// with StartTLS',
  ca: 'CA certificate (PEM, optional)',
  caHint: 'The CA that signed the directory’s certificate, when this machine does not already trust it.',
  bindDn: 'Service account (bind DN)',
  bindPassword: 'Service account password',
  passwordSet: 'A password is set; leave empty to keep it.',
  peopleBase: 'People base',
  groupsBase: 'Groups base (optional)',
  applications: 'Applications its people join',
  applicationsHint: 'Application ids, separated by commas.',
  interval: 'Sync every (minutes, empty: manual only)',
  create: 'Connect',
  created: (name: string) => `${name} connected. Test it, then sync.`,
  back: 'All directory sources',
  settings: 'Settings',
  mapping: 'Attribute mapping',
  filters: 'Filters',
  peopleFilter: 'People filter',
  groupsFilter: 'Groups filter',
  disabledFilter: 'Disabled filter (optional)',
  attr: { id: 'Key', username: 'Username', email: 'E-mail', name: 'Name', givenName: 'Given name', familyName: 'Family name', groupName: 'Group name' } as Record<string, string>,
  save: 'Save',
  saved: 'Saved.',
  test: 'Test',
  testUser: 'Username to look up (optional)',
  runTest: 'Test now',
  steps: { connect: 'Connection', tls: 'TLS certificate', bind: 'Service account', people: 'People', groups: 'Groups', lookup: 'Username lookup' } as Record<string, string>,
  counts: (people: number | null, groups: number | null) => `${people ?? '—'} people, ${groups ?? '—'} groups found.`,
  sample: 'First people as they would be mapped',
  sampleColumns: ['Entry', 'Username', 'E-mail', 'Name'],
  skippedAs: (reason: string) => `skipped: ${reason}`,
  found: (dn: string) => `Found ${dn}.`,
  notFound: 'The username finds no one.',
  sync: 'Sync now',
  syncStarted: 'Sync started.',
  runs: 'Runs',
  runColumns: ['Started', 'State', 'Kind', 'Created', 'Updated', 'Disabled', 'Enabled', 'Skipped', 'Conflicts'],
  noRuns: 'No runs yet.',
  full: 'full',
  changes: 'changes only',
  conflicts: 'Conflicts in the latest run',
  conflictsHint: 'Someone here already has this e-mail address or username. If it is the same person, link them: their Gatehouse password is deleted and they sign in with the directory’s.',
  conflictColumns: ['Entry', 'E-mail', 'Username', ''],
  link: 'Link',
  linked: (email: string) => `${email} linked.`,
  nobody: (email: string) => `Nobody here has ${email}.`,
  skipped: 'Skipped entries in the latest run',
  skippedColumns: ['Entry', 'Reason'],
  danger: 'Delete',
  deleteButton: 'Delete source',
  deleteTitle: (name: string) => `Delete ${name}?`,
  deleteText: 'Its people are disabled (their sessions end) and stay as Gatehouse’s own, without a password; its groups stay as local groups.',
  deleted: (name: string) => `${name} deleted.`,
};

const list = (text: string) => text.split(',').map((s) => s.trim()).filter(Boolean);

export function DirectoryPage() {
  const [sources, { refetch }] = createResource(() => ok(client.GET('/api/admin/directory-sources', { params: { query: { limit: 200 } } })).then((d) => d.directorySources));
  const [name, setName] = createSignal('');
  const [kind, setKind] = createSignal<'ldap' | 'active_directory'>('ldap');
  const [url, setUrl] = createSignal('');
  const [startTls, setStartTls] = createSignal(true);
  const [ca, setCa] = createSignal('');
  const [bindDn, setBindDn] = createSignal('');
  const [bindPassword, setBindPassword] = createSignal('');
  const [peopleBase, setPeopleBase] = createSignal('');
  const [groupsBase, setGroupsBase] = createSignal('');
  const [apps, setApps] = createSignal('');
  const action = useAction();
  const errors = () => fieldErrors(action.error());
  const create = async (e: Event) => {
    e.preventDefault();
    const body = {
      name: name().trim(), kind: kind(), url: url().trim(), startTls: startTls(), peopleBase: peopleBase().trim(), applications: list(apps()),
      ...(ca().trim() ? { caCertificate: ca().trim() } : {}), ...(bindDn().trim() ? { bindDn: bindDn().trim() } : {}),
      ...(bindPassword() ? { bindPassword: bindPassword() } : {}), ...(groupsBase().trim() ? { groupsBase: groupsBase().trim() } : {}),
    };
    const created = await action.run(() => ok(client.POST('/api/admin/directory-sources', { body })));
    if (created) {
      setBindPassword('');
      toast(t.created(created.name));
      refetch();
    }
  };
  return (
    <>
      <h1>{t.title}</h1>
      <p class="muted">{t.intro}</p>
      <Async resource={sources}>
        {(rows) => (
          <ListTable label={t.table} columns={t.columns} rows={rows} empty={t.empty}>
            {(s) => (
              <tr>
                <td><A href={`/directory/${enc(s.id)}`}>{s.name}</A></td>
                <td>{t.kinds[s.kind]}</td>
                <td><code>{s.url}</code></td>
                <td>{s.people}</td>
                <td><span class={`badge ${s.status === 'ok' ? 'ok' : 'warn'}`}>{s.status}</span></td>
                <td>{when(s.lastSyncAt)}</td>
              </tr>
            )}
          </ListTable>
        )}
      </Async>
      <form class="card" novalidate onSubmit={create} aria-label={t.connect}>
        <h2>{t.connect}</h2>
        <Field label={t.name} errors={errors().name}>{(a) => <input {...a} value={name()} maxLength={200} onInput={(e) => setName(e.currentTarget.value)} />}</Field>
        <Field label={t.kind} errors={errors().kind}>
          {(a) => (
            <select {...a} value={kind()} onChange={(e) => setKind(e.currentTarget.value as 'ldap' | 'active_directory')}>
              <option value="ldap">{t.kinds.ldap}</option>
              <option value="active_directory">{t.kinds.active_directory}</option>
            </select>
          )}
        </Field>
        <Field label={t.url} hint={t.urlHint} errors={errors().url}>{(a) => <input {...a} value={url()} placeholder="ldaps://dc1.corp.example" onInput={(e) => setUrl(e.currentTarget.value)} />}</Field>
        <label class="check"><input type="checkbox" checked={startTls()} onChange={(e) => setStartTls(e.currentTarget.checked)} /> {t.startTls}</label>
        <Field label={t.ca} hint={t.caHint} errors={errors().caCertificate}>{(a) => <textarea {...a} rows={4} value={ca()} onInput={(e) => setCa(e.currentTarget.value)} />}</Field>
        <Field label={t.bindDn} errors={errors().bindDn}>{(a) => <input {...a} value={bindDn()} onInput={(e) => setBindDn(e.currentTarget.value)} />}</Field>
        <Field label={t.bindPassword} errors={errors().bindPassword}>{(a) => <input {...a} type="password" autocomplete="new-password" value={bindPassword()} onInput={(e) => setBindPassword(e.currentTarget.value)} />}</Field>
        <Field label={t.peopleBase} errors={errors().peopleBase}>{(a) => <input {...a} value={peopleBase()} placeholder="OU=Staff,DC=corp,DC=example" onInput={(e) => setPeopleBase(e.currentTarget.value)} />}</Field>
        <Field label={t.groupsBase} errors={errors().groupsBase}>{(a) => <input {...a} value={groupsBase()} onInput={(e) => setGroupsBase(e.currentTarget.value)} />}</Field>
        <Field label={t.applications} hint={t.applicationsHint} errors={errors().applications}>{(a) => <input {...a} value={apps()} onInput={(e) => setApps(e.currentTarget.value)} />}</Field>
        <ErrorBox error={action.error()} fieldsShown />
        <button type="submit" disabled={action.busy()}>{t.create}</button>
      </form>
    </>
  );
}

export function DirectorySourcePage() {
  const params = useParams();
  const navigate = useNavigate();
  const [source, { mutate }] = createResource(() => params.id, (id) => ok(client.GET('/api/admin/directory-sources/{id}', { params: { path: { id } } })));
  const [runs, { refetch: refetchRuns }] = createResource(() => params.id, (id) => ok(client.GET('/api/admin/directory-sources/{id}/runs', { params: { path: { id }, query: { limit: 20 } } })).then((d) => d.runs));
  return (
    <>
      <p><A href="/directory">{t.back}</A></p>
      <Async resource={source}>
        {(s) => (
          <>
            <h1>{s.name}</h1>
            <p class="muted">{t.kinds[s.kind]} · <code>{s.url}</code> · {s.people} people · <span class={`badge ${s.status === 'ok' ? 'ok' : 'warn'}`}>{s.status}</span>{s.lastError ? ` · ${s.lastError}` : ''}</p>
            <Settings source={s} onSaved={mutate} />
            <TestCard id={s.id} />
            <Runs id={s.id} runs={runs} refetch={refetchRuns} />
            <section class="card danger">
              <h2>{t.danger}</h2>
              <DeleteButton source={s} onDeleted={() => navigate('/directory')} />
            </section>
          </>
        )}
      </Async>
    </>
  );
}

function Settings(props: { source: Source; onSaved: (s: Source) => void }) {
  const s = props.source;
  const [url, setUrl] = createSignal(s.url);
  const [bindDn, setBindDn] = createSignal(s.bindDn ?? '');
  const [bindPassword, setBindPassword] = createSignal('');
  const [peopleBase, setPeopleBase] = createSignal(s.peopleBase);
  const [groupsBase, setGroupsBase] = createSignal(s.groupsBase ?? '');
  const [peopleFilter, setPeopleFilter] = createSignal(s.peopleFilter);
  const [groupsFilter, setGroupsFilter] = createSignal(s.groupsFilter);
  const [disabledFilter, setDisabledFilter] = createSignal(s.disabledFilter ?? '');
  const [interval, setInterval] = createSignal(s.syncIntervalMinutes === null ? '' : String(s.syncIntervalMinutes));
  const [apps, setApps] = createSignal(s.applications.join(', '));
  const [attrs, setAttrs] = createSignal<Record<string, string>>({ ...s.attributes } as unknown as Record<string, string>);
  const save = useAction();
  const errors = () => fieldErrors(save.error());
  const submit = async (e: Event) => {
    e.preventDefault();
    const mapped = Object.fromEntries(Object.keys(t.attr).map((k) => [k, attrs()[k]!.trim()]));
    const body = {
      url: url().trim(), bindDn: bindDn().trim() || null, peopleBase: peopleBase().trim(), groupsBase: groupsBase().trim() || null,
      peopleFilter: peopleFilter().trim(), groupsFilter: groupsFilter().trim(), disabledFilter: disabledFilter().trim() || null,
      syncIntervalMinutes: interval().trim() ? Number(interval()) : null, applications: list(apps()), attributes: mapped,
      ...(bindPassword() ? { bindPassword: bindPassword() } : {}),
    };
    const saved = await save.run(() => ok(client.PATCH('/api/admin/directory-sources/{id}', { params: { path: { id: s.id } }, body })));
    if (saved) {
      setBindPassword('');
      props.onSaved(saved);
      toast(t.saved);
    }
  };
  return (
    <form class="card" novalidate onSubmit={submit} aria-label={t.settings}>
      <h2>{t.settings}</h2>
      <Field label={t.url} hint={t.urlHint} errors={errors().url}>{(a) => <input {...a} value={url()} onInput={(e) => setUrl(e.currentTarget.value)} />}</Field>
      <Field label={t.bindDn} errors={errors().bindDn}>{(a) => <input {...a} value={bindDn()} onInput={(e) => setBindDn(e.currentTarget.value)} />}</Field>
      <Field label={t.bindPassword} hint={s.bindPasswordSet ? t.passwordSet : undefined} errors={errors().bindPassword}>{(a) => <input {...a} type="password" autocomplete="new-password" value={bindPassword()} onInput={(e) => setBindPassword(e.currentTarget.value)} />}</Field>
      <Field label={t.peopleBase} errors={errors().peopleBase}>{(a) => <input {...a} value={peopleBase()} onInput={(e) => setPeopleBase(e.currentTarget.value)} />}</Field>
      <Field label={t.groupsBase} errors={errors().groupsBase}>{(a) => <input {...a} value={groupsBase()} onInput={(e) => setGroupsBase(e.currentTarget.value)} />}</Field>
      <Field label={t.applications} hint={t.applicationsHint} errors={errors().applications}>{(a) => <input {...a} value={apps()} onInput={(e) => setApps(e.currentTarget.value)} />}</Field>
      <Field label={t.interval} errors={errors().syncIntervalMinutes}>{(a) => <input {...a} inputMode="numeric" value={interval()} onInput={(e) => setInterval(e.currentTarget.value)} />}</Field>
      <h3>{t.filters}</h3>
      <Field label={t.peopleFilter} errors={errors().peopleFilter}>{(a) => <input {...a} value={peopleFilter()} onInput={(e) => setPeopleFilter(e.currentTarget.value)} />}</Field>
      <Field label={t.groupsFilter} errors={errors().groupsFilter}>{(a) => <input {...a} value={groupsFilter()} onInput={(e) => setGroupsFilter(e.currentTarget.value)} />}</Field>
      <Field label={t.disabledFilter} errors={errors().disabledFilter}>{(a) => <input {...a} value={disabledFilter()} onInput={(e) => setDisabledFilter(e.currentTarget.value)} />}</Field>
      <h3>{t.mapping}</h3>
      <For each={Object.keys(t.attr)}>
        {(key) => (
          <Field label={t.attr[key]} errors={errors().attributes}>
            {(a) => <input {...a} value={attrs()[key] ?? ''} onInput={(e) => setAttrs({ ...attrs(), [key]: e.currentTarget.value })} />}
          </Field>
        )}
      </For>
      <ErrorBox error={save.error()} fieldsShown />
      <button type="submit" disabled={save.busy()}>{t.save}</button>
    </form>
  );
}

function TestCard(props: { id: string }) {
  const [username, setUsername] = createSignal('');
  const [result, setResult] = createSignal<TestResult | undefined>();
  const action = useAction();
  const run = async (e: Event) => {
    e.preventDefault();
    const body = username().trim() ? { username: username().trim() } : {};
    const answer = await action.run(() => ok(client.POST('/api/admin/directory-sources/{id}/test', { params: { path: { id: props.id } }, body })));
    if (answer) setResult(answer);
  };
  return (
    <form class="card" onSubmit={run} aria-label={t.test}>
      <h2>{t.test}</h2>
      <Field label={t.testUser}>{(a) => <input {...a} value={username()} onInput={(e) => setUsername(e.currentTarget.value)} />}</Field>
      <button type="submit" disabled={action.busy()}>{t.runTest}</button>
      <ErrorBox error={action.error()} />
      <Show when={result()}>
        {(r) => (
          <div data-testid="directory-test">
            <ul class="steps">
              <For each={r().steps}>
                {(step) => (
                  <li>
                    <span class={`badge ${step.ok ? 'ok' : 'warn'}`}>{step.ok ? 'ok' : 'failed'}</span> {t.steps[step.step]}
                    {step.error ? `: ${step.error}` : ''}
                  </li>
                )}
              </For>
            </ul>
            <Show when={r().people !== null}><p>{t.counts(r().people, r().groups)}</p></Show>
            <Show when={r().sample.length}>
              <ListTable label={t.sample} columns={t.sampleColumns} rows={r().sample} empty="">
                {(e) => (
                  <tr>
                    <td><code>{e.dn}</code></td>
                    <td>{e.person?.username ?? ''}</td>
                    <td>{e.person?.email ?? t.skippedAs(e.skipped ?? '')}</td>
                    <td>{e.person?.name ?? ''}</td>
                  </tr>
                )}
              </ListTable>
            </Show>
            <Show when={r().lookup}>{(l) => <p>{l().found ? t.found(l().person!.dn) : t.notFound}</p>}</Show>
          </div>
        )}
      </Show>
    </form>
  );
}

function Runs(props: { id: string; runs: ReturnType<typeof createResource<Run[]>>[0]; refetch: () => void }) {
  const sync = useAction();
  const link = useAction();
  const start = async () => {
    const started = await sync.run(() => ok(client.POST('/api/admin/directory-sources/{id}/sync', { params: { path: { id: props.id } }, body: {} })));
    if (started) {
      toast(t.syncStarted);
      props.refetch();
    }
  };
  const linkConflict = async (email: string) => {
    const done = await link.run(async () => {
      const found = await ok(client.GET('/api/admin/people', { params: { query: { q: email, limit: 200 } } }));
      const person = found.people.find((p) => p.email === email);
      if (!person) throw new Error(t.nobody(email));
      return ok(client.POST('/api/admin/people/{id}/directory-link', { params: { path: { id: person.id } }, body: { sourceId: props.id } }));
    });
    if (done) toast(t.linked(done.email));
  };
  return (
    <section class="card">
      <h2>{t.runs}</h2>
      <button type="button" onClick={() => void start()} disabled={sync.busy()}>{t.sync}</button>
      <ErrorBox error={sync.error()} />
      <Async resource={props.runs}>
        {(runs) => (
          <>
            <ListTable label={t.runs} columns={t.runColumns} rows={runs} empty={t.noRuns}>
              {(r) => (
                <tr>
                  <td>{when(r.startedAt)}</td>
                  <td><span class={`badge ${r.state === 'failed' ? 'warn' : 'ok'}`}>{r.state}</span>{r.error ? ` ${r.error}` : ''}</td>
                  <td>{r.full ? t.full : t.changes}</td>
                  <td>{r.counts.created}</td>
                  <td>{r.counts.updated}</td>
                  <td>{r.counts.disabled}</td>
                  <td>{r.counts.enabled}</td>
                  <td>{r.counts.skipped}</td>
                  <td>{r.counts.conflicts}</td>
                </tr>
              )}
            </ListTable>
            <Show when={runs[0]?.conflicts.length}>
              <h3>{t.conflicts}</h3>
              <p class="muted">{t.conflictsHint}</p>
              <ErrorBox error={link.error()} />
              <ListTable label={t.conflicts} columns={t.conflictColumns} rows={runs[0]!.conflicts} empty="">
                {(c) => (
                  <tr>
                    <td><code>{c.dn}</code></td>
                    <td>{c.email ?? ''}</td>
                    <td>{c.username ?? ''}</td>
                    <td>
                      <Show when={c.email}>
                        <button type="button" class="secondary" disabled={link.busy()} onClick={() => void linkConflict(c.email!)}>{t.link}</button>
                      </Show>
                    </td>
                  </tr>
                )}
              </ListTable>
            </Show>
            <Show when={runs[0]?.skipped.length}>
              <h3>{t.skipped}</h3>
              <ListTable label={t.skipped} columns={t.skippedColumns} rows={runs[0]!.skipped} empty="">
                {(s) => (
                  <tr>
                    <td><code>{s.dn}</code></td>
                    <td>{s.reason}</td>
                  </tr>
                )}
              </ListTable>
            </Show>
          </>
        )}
      </Async>
    </section>
  );
}

function DeleteButton(props: { source: Source; onDeleted: () => void }) {
  const action = useAction();
  const remove = async () => {
    if (!(await confirmAction(t.deleteTitle(props.source.name), t.deleteText))) return;
    const done = await action.run(() => ok(client.DELETE('/api/admin/directory-sources/{id}', { params: { path: { id: props.source.id } } })));
    if (done !== undefined) {
      toast(t.deleted(props.source.name));
      props.onDeleted();
    }
  };
  return (
    <>
      <ErrorBox error={action.error()} />
      <button type="button" class="danger" disabled={action.busy()} onClick={() => void remove()}>{t.deleteButton}</button>
    </>
  );
}
