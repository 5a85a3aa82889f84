/**
 * People across applications: everyone with an account (search by e-mail, username or a word of
 * the name), adding people, and one person's page — status, memberships, sessions, groups, sign-in
 * methods — with disable/enable, the reset e-mail, sign out everywhere and delete (issue 33).
 */
import { createResource, createSignal, For, Show } from 'solid-js';
import { A, useNavigate, useParams } from '@solidjs/router';
import { client, enc, fieldErrors, ok, type Person } from '../../api';
import { GroupPicker } from '../../group-picker';
import { createPagedList, LoadMore, page, PAGE } from '../../paged';
import { Async, confirmAction, CopyField, DataTable, ErrorBox, Field, ListTable, Loading, toast, useAction, when } from '../../ui';
import { isOwner, managesPeople, may } from '../../me';
import { PersonNetwork } from './network';

const t = {
  title: 'People',
  intro: 'Everyone with an account on this Gatehouse, whatever the application.',
  search: 'Search people',
  searchPlaceholder: 'Start of an e-mail, username or name',
  searchButton: 'Search',
  table: 'People',
  columns: ['Person', 'Username', 'E-mail verified', 'Applications', 'Joined Gatehouse'],
  empty: (q: string) => (q ? `Nobody's e-mail, username or name starts with “${q}”.` : 'Nobody has an account yet.'),
  disabled: 'disabled',
  add: 'Add a person',
  addEmail: 'E-mail address',
  addName: 'Name (optional)',
  addHow: 'How they get a password',
  addInvite: 'E-mail them a link to choose one (valid 7 days)',
  addPassword: 'Set it now',
  addPasswordLabel: 'Password',
  addButton: 'Add',
  added: (email: string) => `${email} was added.`,
  actions: 'Actions',
  disable: 'Disable',
  enable: 'Enable',
  disableTitle: (who: string) => `Disable ${who}?`,
  disableBody: 'They are signed out everywhere at once (applications with back-channel logout are told) and cannot sign in until enabled again.',
  disabledNow: (who: string) => `${who} is disabled and signed out everywhere.`,
  enabledNow: (who: string) => `${who} can sign in again.`,
  reset: 'Send a password-reset e-mail',
  resetSent: (email: string) => `A password-reset link was sent to ${email}.`,
  resetLink: 'Make a reset link to pass on',
  resetLinkLabel: 'Password-reset link',
  resetLinkNote: (email: string, until: string) =>
    `Send this link to ${email} yourself (it works once, until ${until}). A newer link or a reset e-mail replaces it. Anyone with it can set their password, so send it only to them.`,
  signOutAll: 'Sign out everywhere',
  signOutTitle: (who: string) => `Sign ${who} out everywhere?`,
  signOutBody: 'Every session ends now, and applications with back-channel logout are told.',
  signedOut: (n: number) => `${n} session${n === 1 ? '' : 's'} ended.`,
  remove: 'Delete',
  removeTitle: (who: string) => `Delete ${who}?`,
  removeBody: 'The account goes everywhere: memberships, sessions, second factors and sign-in methods. Applications with a webhook hear person.deleted. This cannot be undone.',
  removed: (who: string) => `${who} was deleted.`,
  sessions: 'Sessions',
  noSessions: 'No live sessions.',
  sessionColumns: ['Device', 'Address', 'Signed in', 'Last seen', 'Second factor'],
  groups: 'Groups',
  noGroups: 'In no group.',
  details: 'Username and names',
  username: 'Username',
  usernameHint: 'What applications see as preferred_username: lower-case letters, digits, “.”, “_” and “-”. Only an administrator can change it.',
  name: 'Full name',
  givenName: 'Given name',
  familyName: 'Family name',
  emailVerified: 'E-mail address verified',
  emailVerifiedHint: 'Applications see it as email_verified. Tick it only when you know the address is theirs.',
  save: 'Save',
  saved: 'Saved.',
  groupsHint: 'Their directory groups: applications that ask for the groups scope see them.',
  groupsSaved: 'Groups saved.',
  secondFactors: 'Second factors',
  secondFactorsHint: "A lost device: reset them from the person's membership on an application's Members tab.",
  totpOn: (since: string) => `Authenticator app (TOTP) since ${since}`,
  totpOff: 'No authenticator app',
  passkeys: (n: number) => `${n} passkey${n === 1 ? '' : 's'}`,
  recoveryCodes: (n: number) => `${n} recovery code${n === 1 ? '' : 's'} left`,
  status: (s: string) => (s === 'active' ? 'active' : 'disabled: cannot sign in'),
  yes: 'yes',
  no: 'no',
  memberships: 'Applications',
  noMemberships: 'Not a member of any application (an account for the account pages only).',
  membershipTable: 'Memberships',
  membershipColumns: ['Application', 'Status', 'Role', 'Joined', 'Last active'],
  signIn: 'Sign-in methods',
  password: 'E-mail and password',
  linked: (provider: string, email: string) => `${provider} (${email})`,
  none: 'None: this person cannot sign in until they reset a password or an administrator helps.',
  audit: 'Their entries in the audit log',
  facts: (email: string, verified: boolean, created: string) => `${email} · e-mail ${verified ? 'verified' : 'not verified'} · account since ${created}`,
};

function AddPerson(props: { onAdded: (id: string) => void }) {
  const [open, setOpen] = createSignal(false);
  const [how, setHow] = createSignal<'invite' | 'password'>('invite');
  const [hint] = createResource(open, () => ok(client.GET('/api/admin/settings/password-policy')).then((p) => p.hint));
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const email = String(form.get('email') ?? '').trim();
    const name = String(form.get('name') ?? '').trim();
    const created = await action.run(() =>
      ok(
        client.POST('/api/admin/people', {
          body: { email, ...(name ? { name } : {}), ...(how() === 'invite' ? { sendInvitation: true } : { password: String(form.get('password') ?? '') }) },
        }),
      ),
    );
    if (created) {
      toast(t.added(created.email));
      props.onAdded(created.id);
    }
  };
  return (
    <Show when={open()} fallback={<button type="button" onClick={() => setOpen(true)}>{t.add}</button>}>
      <form class="card" onSubmit={submit} aria-label={t.add}>
        <h2>{t.add}</h2>
        <label class="field">
          <span>{t.addEmail}</span>
          <input type="email" name="email" required autocomplete="off" />
        </label>
        <label class="field">
          <span>{t.addName}</span>
          <input name="name" autocomplete="off" />
        </label>
        <fieldset>
          <legend>{t.addHow}</legend>
          <label class="check">
            <input type="radio" name="how" checked={how() === 'invite'} onChange={() => setHow('invite')} /> {t.addInvite}
          </label>
          <label class="check">
            <input type="radio" name="how" checked={how() === 'password'} onChange={() => setHow('password')} /> {t.addPassword}
          </label>
        </fieldset>
        <Show when={how() === 'password'}>
          <label class="field">
            <span>{t.addPasswordLabel}</span>
            <input type="password" name="password" autocomplete="new-password" required aria-describedby="new-person-password-hint" />
            <span class="hint" id="new-person-password-hint">
              {hint() ?? ''}
            </span>
          </label>
        </Show>
        <ErrorBox error={action.error()} />
        <div class="actions">
          <button class="primary" type="submit" disabled={action.busy()}>
            {t.addButton}
          </button>
        </div>
      </form>
    </Show>
  );
}

export function PeoplePage() {
  const navigate = useNavigate();
  const [q, setQ] = createSignal('');
  const [search, setSearch] = createSignal('');
  const people = createPagedList(search, (query, cursor) =>
    ok(client.GET('/api/admin/people', { params: { query: { limit: PAGE, cursor, ...(query ? { q: query } : {}) } } })).then((d) => page(d.people, d)),
  );
  return (
    <>
      <h1>{t.title}</h1>
      <p class="muted">{t.intro}</p>
      <form class="row card" role="search" onSubmit={(e) => (e.preventDefault(), setSearch(q().trim()))}>
        <input type="search" aria-label={t.search} placeholder={t.searchPlaceholder} value={q()} onInput={(e) => setQ(e.currentTarget.value)} />
        <button type="submit">{t.searchButton}</button>
      </form>
      <Show when={managesPeople()}>
        <AddPerson onAdded={(id) => navigate(`/people/${enc(id)}`)} />
      </Show>
      <Async resource={people.first}>
        {() => (
          <ListTable label={t.table} rows={people.rows()} columns={t.columns} empty={<>{t.empty(search())}</>}>
            {(p) => (
              <tr data-person={p.email}>
                <td>
                  <A href={`/people/${enc(p.id)}`}>{p.name ?? p.email}</A> <Show when={p.name}><span class="muted">{p.email}</span></Show>{' '}
                  <Show when={p.status === 'disabled'}>
                    <span class="badge bad">{t.disabled}</span>
                  </Show>
                </td>
                <td>
                  <code>{p.username}</code>
                </td>
                <td>{p.emailVerified ? t.yes : t.no}</td>
                <td>{p.applications}</td>
                <td>{when(p.createdAt)}</td>
              </tr>
            )}
          </ListTable>
        )}
      </Async>
      <LoadMore list={people} />
    </>
  );
}

function PersonActions(props: { person: { id: string; email: string; name: string | null; status: 'active' | 'disabled' }; onChanged: () => void; onSessions: () => void }) {
  const navigate = useNavigate();
  const action = useAction();
  const who = () => props.person.name ?? props.person.email;
  const id = () => ({ params: { path: { id: props.person.id } } });
  const setStatus = async (status: 'active' | 'disabled') => {
    if (status === 'disabled' && !(await confirmAction(t.disableTitle(who()), t.disableBody, t.disable))) return;
    if (await action.run(() => ok(client.PATCH('/api/admin/people/{id}', { ...id(), body: { status } })))) {
      toast(status === 'disabled' ? t.disabledNow(who()) : t.enabledNow(who()));
      props.onChanged();
      props.onSessions();
    }
  };
  const reset = async () => {
    if (await action.run(() => ok(client.POST('/api/admin/people/{id}/password-reset', id())))) toast(t.resetSent(props.person.email));
  };
  // A link to hand over (issue 44, m6): where no mail server is configured, or the e-mail went missing.
  const [link, setLink] = createSignal<{ url: string; expiresAt: string } | null>(null);
  const makeLink = async () => {
    const made = await action.run(() => ok(client.POST('/api/admin/people/{id}/password-reset-link', id())));
    if (made) setLink(made);
  };
  const signOut = async () => {
    if (!(await confirmAction(t.signOutTitle(who()), t.signOutBody, t.signOutAll))) return;
    const done = await action.run(() => ok(client.POST('/api/admin/people/{id}/sign-out', id())));
    if (done) {
      toast(t.signedOut(done.sessionsEnded));
      props.onSessions();
    }
  };
  const remove = async () => {
    if (!(await confirmAction(t.removeTitle(who()), t.removeBody, t.remove))) return;
    if ((await action.run(() => ok(client.DELETE('/api/admin/people/{id}', id())))) !== undefined) {
      toast(t.removed(who()));
      navigate('/people');
    }
  };
  return (
    <div class="card" aria-label={t.actions}>
      <div class="row">
        <Show when={props.person.status === 'active'} fallback={<button type="button" onClick={() => setStatus('active')} disabled={action.busy()}>{t.enable}</button>}>
          <button type="button" onClick={() => setStatus('disabled')} disabled={action.busy()}>
            {t.disable}
          </button>
        </Show>
        <button type="button" onClick={reset} disabled={action.busy() || props.person.status !== 'active'}>
          {t.reset}
        </button>
        <Show when={may('POST /people/:id/password-reset-link')}>
          <button type="button" onClick={makeLink} disabled={action.busy() || props.person.status !== 'active'}>
            {t.resetLink}
          </button>
        </Show>
        <button type="button" onClick={signOut} disabled={action.busy()}>
          {t.signOutAll}
        </button>
        <button type="button" class="danger" onClick={remove} disabled={action.busy()}>
          {t.remove}
        </button>
      </div>
      <ErrorBox error={action.error()} />
      <Show when={link()}>
        {(l) => (
          <div class="notice" data-testid="reset-link">
            <CopyField label={t.resetLinkLabel} value={l().url} />
            <p class="hint">{t.resetLinkNote(props.person.email, new Date(l().expiresAt).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }))}</p>
          </div>
        )}
      </Show>
    </div>
  );
}

export function PersonPage() {
  const params = useParams<{ id: string }>();
  const [person, { refetch }] = createResource(
    () => params.id,
    (id) => ok(client.GET('/api/admin/people/{id}', { params: { path: { id } } })),
  );
  const [sessions, { refetch: refetchSessions }] = createResource(
    () => params.id,
    (id) => ok(client.GET('/api/admin/people/{id}/sessions', { params: { path: { id } } })),
  );
  return (
    <Show when={!person.error} fallback={<ErrorBox error={person.error} />}>
      <Show when={person.latest} fallback={<Loading />}>
        {(p) => (
          <>
            <h1>{p().name ?? p().email}</h1>
            <p class="muted">{t.facts(p().email, p().emailVerified, when(p().createdAt))}</p>
            <p>
              <span class={`badge ${p().status === 'active' ? 'ok' : 'bad'}`} data-testid="person-status">
                {t.status(p().status)}
              </span>
            </p>
            <Show when={managesPeople()}>
              <PersonActions person={p()} onChanged={() => void refetch()} onSessions={() => void refetchSessions()} />
              <PersonDetails person={p()} onSaved={() => void refetch()} />
            </Show>
            <h2>{t.memberships}</h2>
            <Show when={p().memberships.length} fallback={<p class="muted">{t.noMemberships}</p>}>
              <DataTable label={t.membershipTable} columns={t.membershipColumns} rows={p().memberships}>
                {(m) => (
                  <tr data-membership={m.applicationId}>
                    <td>
                      <A href={`/applications/${enc(m.applicationId)}/members`}>{m.applicationName}</A>
                    </td>
                    <td>
                      <span class={`badge ${m.status === 'active' ? 'ok' : 'bad'}`}>{m.status}</span>
                    </td>
                    <td>{m.role}</td>
                    <td>{when(m.joinedAt)}</td>
                    <td>{when(m.lastActiveAt)}</td>
                  </tr>
                )}
              </DataTable>
            </Show>
            <h2>{t.signIn}</h2>
            <ul>
              <Show when={p().hasPassword}>
                <li>{t.password}</li>
              </Show>
              <For each={p().linkedAccounts.filter((a) => a.provider !== 'credential')}>{(a) => <li>{t.linked(a.provider, a.email)}</li>}</For>
            </ul>
            <Show when={!p().hasPassword && !p().linkedAccounts.some((a) => a.provider !== 'credential')}>
              <p class="muted">{t.none}</p>
            </Show>
            <h2>{t.sessions}</h2>
            <Show when={sessions.latest}>
              {(list) => (
                <Show when={list().sessions.length} fallback={<p class="muted">{t.noSessions}</p>}>
                  <DataTable label={t.sessions} columns={t.sessionColumns} rows={list().sessions}>
                    {(s) => (
                      <tr>
                        <td>{s.device}</td>
                        <td>{s.ip}</td>
                        <td>{when(s.createdAt)}</td>
                        <td>{when(s.lastSeenAt)}</td>
                        <td>{s.multiFactor ? t.yes : t.no}</td>
                      </tr>
                    )}
                  </DataTable>
                </Show>
              )}
            </Show>
            <Show when={managesPeople()}>
              <PersonNetwork personId={p().id} />
            </Show>
            <Show
              when={managesPeople()}
              fallback={
                <>
                  <h2>{t.groups}</h2>
                  <Show when={p().groups.length} fallback={<p class="muted">{t.noGroups}</p>}>
                    <ul>
                      <For each={p().groups}>{(g) => <li>{g.name} <code>{g.id}</code></li>}</For>
                    </ul>
                  </Show>
                </>
              }
            >
              <PersonGroups person={p()} onSaved={() => void refetch()} />
            </Show>
            <h2>{t.secondFactors}</h2>
            <ul data-testid="person-second-factors">
              <li>{p().secondFactor.totp.enabled ? t.totpOn(when(p().secondFactor.totp.confirmedAt)) : t.totpOff}</li>
              <li>{t.passkeys(p().secondFactor.passkeys.count)}</li>
              <li>{t.recoveryCodes(p().secondFactor.recoveryCodes.remaining)}</li>
            </ul>
            <p class="muted">{t.secondFactorsHint}</p>
            <Show when={isOwner()}>
              <p>
                <A href={`/audit-log?actor=${enc(`person:${p().id}`)}`}>{t.audit}</A>
              </p>
            </Show>
          </>
        )}
      </Show>
    </Show>
  );
}

/** The administrator's edit of a person (PATCH /api/admin/people/:id): username, names, e-mail verified. */
function PersonDetails(props: { person: Person; onSaved: (p: Person) => void }) {
  const [username, setUsername] = createSignal(props.person.username);
  const [name, setName] = createSignal(props.person.name ?? '');
  const [givenName, setGivenName] = createSignal(props.person.givenName ?? '');
  const [familyName, setFamilyName] = createSignal(props.person.familyName ?? '');
  const [verified, setVerified] = createSignal(props.person.emailVerified);
  const save = useAction();
  const errors = () => fieldErrors(save.error());
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = {
      username: username().trim(),
      name: name().trim() || null,
      givenName: givenName().trim() || null,
      familyName: familyName().trim() || null,
      emailVerified: verified(),
    };
    const saved = await save.run(() => ok(client.PATCH('/api/admin/people/{id}', { params: { path: { id: props.person.id } }, body })));
    if (saved) {
      props.onSaved(saved);
      setUsername(saved.username);
      toast(t.saved);
    }
  };
  return (
    <form class="card" novalidate onSubmit={submit} aria-label={t.details}>
      <h2>{t.details}</h2>
      <Field label={t.username} hint={t.usernameHint} errors={errors().username}>
        {(a) => <input {...a} name="username" value={username()} maxLength={64} autocomplete="off" onInput={(e) => setUsername(e.currentTarget.value)} />}
      </Field>
      <Field label={t.name} errors={errors().name}>
        {(a) => <input {...a} name="name" value={name()} maxLength={200} onInput={(e) => setName(e.currentTarget.value)} />}
      </Field>
      <Field label={t.givenName} errors={errors().givenName}>
        {(a) => <input {...a} name="givenName" value={givenName()} maxLength={100} onInput={(e) => setGivenName(e.currentTarget.value)} />}
      </Field>
      <Field label={t.familyName} errors={errors().familyName}>
        {(a) => <input {...a} name="familyName" value={familyName()} maxLength={100} onInput={(e) => setFamilyName(e.currentTarget.value)} />}
      </Field>
      <label class="check">
        <input type="checkbox" name="emailVerified" checked={verified()} onChange={(e) => setVerified(e.currentTarget.checked)} /> {t.emailVerified}
      </label>
      <p class="hint">{t.emailVerifiedHint}</p>
      <ErrorBox error={save.error()} fieldsShown />
      <div class="actions">
        <button class="primary" type="submit" disabled={save.busy() || !username().trim()}>
          {t.save}
        </button>
      </div>
    </form>
  );
}

/** A person's directory groups: each change is a PUT or DELETE of one membership, at once. */
function PersonGroups(props: { person: Person; onSaved: (p: Person) => void }) {
  const action = useAction();
  const change = async (ids: string[]) => {
    const before = props.person.groups.map((g) => g.id);
    const added = ids.filter((id) => !before.includes(id));
    const removed = before.filter((id) => !ids.includes(id));
    const path = (id: string) => ({ params: { path: { id, personId: props.person.id } } });
    const saved = await action.run(async () => {
      for (const id of added) await ok(client.PUT('/api/admin/groups/{id}/members/{personId}', path(id)));
      for (const id of removed) await ok(client.DELETE('/api/admin/groups/{id}/members/{personId}', path(id)));
      return ok(client.GET('/api/admin/people/{id}', { params: { path: { id: props.person.id } } }));
    });
    if (saved) {
      props.onSaved(saved);
      toast(t.groupsSaved);
    }
  };
  return (
    <section aria-label={t.groups}>
      <GroupPicker
        label={t.groups}
        hint={t.groupsHint}
        value={props.person.groups.map((g) => g.id)}
        onChange={(ids) => void change(ids)}
        disabled={action.busy()}
        hrefOf={(id) => `/groups/${enc(id)}`}
      />
      <ErrorBox error={action.error()} />
    </section>
  );
}
