import { createSignal, Show } from 'solid-js';
import { A } from '@solidjs/router';
import { client, enc, ok, type Application, type Member, type SecondFactorSummary } from '../../api';
import { createPagedList, LoadMore, page, PAGE } from '../../paged';
import { Async, confirmAction, ErrorBox, toast, useAction, when, ListTable } from '../../ui';

type Status = Member['status'];
type Role = Member['role'];

const t = {
  search: 'Search members',
  searchPlaceholder: 'Search e-mail or name',
  statusFilter: 'Status filter',
  roleFilter: 'Role filter',
  anyStatus: 'Any status',
  anyRole: 'Any role',
  active: 'Active',
  suspended: 'Suspended',
  member: 'Member',
  admin: 'Admin',
  searchButton: 'Search',
  table: 'Members',
  columns: ['Person', 'Status', 'Role', 'Joined', 'Last active', 'Actions'],
  empty: (filtered: boolean) => `No members${filtered ? ' match these filters' : ' yet — invite people from the Invitations tab'}.`,
  roleOf: (email: string) => `Role of ${email}`,
  nowRole: (email: string, role: string) => `${email} is now ${role}.`,
  suspend: 'Suspend',
  suspendTitle: (email: string) => `Suspend ${email}?`,
  suspendText: 'They are signed out of this application at once and cannot sign in until activated.',
  suspendedToast: (email: string) => `${email} suspended.`,
  activate: 'Activate',
  activated: (email: string) => `${email} activated.`,
  remove: 'Remove',
  removeTitle: (email: string) => `Remove ${email}?`,
  removeText: 'They lose access to this application and their profile for it is deleted.',
  removed: (email: string) => `${email} removed.`,
  secondFactor: 'Second factor',
  factorsOf: (email: string) => `Second factor of ${email}`,
  totp: (since: string | null) => `Authenticator app: ${since ? `on since ${since}` : 'none'}`,
  passkeys: (count: number, lastUsed: string | null) => `Passkeys: ${count}${lastUsed ? ` (last used ${lastUsed})` : ''}`,
  codesLeft: (n: number) => `Recovery codes left: ${n}`,
  nothingToReset: 'Nothing to reset: no second factor is set up.',
  reset: 'Reset second factor…',
  resetAction: 'Reset second factor',
  resetTitle: (email: string) => `Reset the second factor of ${email}?`,
  resetText:
    'For a lost device: their authenticator app, passkeys and recovery codes are removed, and they are signed out everywhere. They sign in again with their password (and set up a new factor if an application requires one). This affects every application they use.',
  resetDone: (email: string) => `Second factor of ${email} reset; they were signed out everywhere.`,
  noFactor: 'no second factor yet',
  mfaRequired: (missing: number) =>
    `This application requires a second factor. ${missing === 0 ? 'Every member shown has one.' : `${missing} of the members shown ${missing === 1 ? 'has' : 'have'} none yet (marked below): they set one up at their next sign-in, and cannot sign in to this application until they do.`}`,
};

export function MembersTab(props: { app: Application }) {
  const [status, setStatus] = createSignal<Status | ''>('');
  const [role, setRole] = createSignal<Role | ''>('');
  const [q, setQ] = createSignal('');
  const [search, setSearch] = createSignal('');
  const id = props.app.id;
  const members = createPagedList(
    () => ({ status: status() || undefined, role: role() || undefined, q: search() || undefined }),
    (filters, cursor) =>
      ok(client.GET('/api/admin/applications/{id}/users', { params: { path: { id }, query: { limit: PAGE, cursor, ...filters } } })).then((d) => page(d.users, d)),
  );
  const refetch = members.refetch;
  const mfaRequired = () => props.app.authPolicy.mfa === 'required';
  const action = useAction();

  const patch = async (m: Member, body: { status?: Status; role?: Role }, message: string) => {
    if (body.status === 'suspended' && !(await confirmAction(t.suspendTitle(m.email), t.suspendText, t.suspend))) return;
    const r = await action.run(() => ok(client.PATCH('/api/admin/applications/{id}/users/{uid}', { params: { path: { id, uid: m.id } }, body })));
    if (r !== undefined) {
      toast(message);
      void refetch();
    }
  };
  const remove = async (m: Member) => {
    if (!(await confirmAction(t.removeTitle(m.email), t.removeText, t.remove))) return;
    const done = await action.run(async () => (await ok(client.DELETE('/api/admin/applications/{id}/users/{uid}', { params: { path: { id, uid: m.id } } })), true));
    if (done) {
      toast(t.removed(m.email));
      void refetch();
    }
  };

  // One member's second factors at a time, read on demand (the list does not carry them).
  const [factors, setFactors] = createSignal<{ member: Member; summary: SecondFactorSummary } | undefined>();
  const showFactors = async (m: Member) => {
    if (factors()?.member.id === m.id) return setFactors(undefined);
    const detail = await action.run(() => ok(client.GET('/api/admin/applications/{id}/users/{uid}', { params: { path: { id, uid: m.id } } })));
    if (detail) setFactors({ member: m, summary: detail.secondFactor });
  };
  const resetFactors = async (m: Member) => {
    if (!(await confirmAction(t.resetTitle(m.email), t.resetText, t.resetAction))) return;
    const done = await action.run(async () => (await ok(client.DELETE('/api/admin/applications/{id}/users/{uid}/second-factor', { params: { path: { id, uid: m.id } } })), true));
    if (done) {
      toast(t.resetDone(m.email));
      setFactors(undefined);
    }
  };

  return (
    <>
      <form class="row card" role="search" onSubmit={(e) => (e.preventDefault(), setSearch(q().trim()))}>
        <input type="search" aria-label={t.search} placeholder={t.searchPlaceholder} value={q()} onInput={(e) => setQ(e.currentTarget.value)} />
        <select aria-label={t.statusFilter} value={status()} onChange={(e) => setStatus(e.currentTarget.value as Status | '')}>
          <option value="">{t.anyStatus}</option>
          <option value="active">{t.active}</option>
          <option value="suspended">{t.suspended}</option>
        </select>
        <select aria-label={t.roleFilter} value={role()} onChange={(e) => setRole(e.currentTarget.value as Role | '')}>
          <option value="">{t.anyRole}</option>
          <option value="member">{t.member}</option>
          <option value="admin">{t.admin}</option>
        </select>
        <button type="submit">{t.searchButton}</button>
      </form>
      <ErrorBox error={action.error()} />
      <Show when={mfaRequired() && members.rows().length}>
        <div class="notice" data-testid="mfa-missing">{t.mfaRequired(members.rows().filter((m) => !m.hasSecondFactor).length)}</div>
      </Show>
      <Async resource={members.first}>
        {() => (
          <ListTable label={t.table} rows={members.rows()} columns={t.columns} empty={<>{t.empty(Boolean(search() || status() || role()))}</>}>
            {(m) => (
              <tr data-member={m.email}>
                <td>
                  <A href={`/people/${enc(m.userId)}`}>{m.name ?? m.email}</A> <Show when={m.name}><span class="muted">{m.email}</span></Show>
                  <Show when={mfaRequired() && !m.hasSecondFactor}>
                    {' '}
                    <span class="badge warn">{t.noFactor}</span>
                  </Show>
                </td>
                <td>
                  <span class={`badge ${m.status === 'active' ? 'ok' : 'bad'}`}>{m.status}</span>
                </td>
                <td>
                  <select aria-label={t.roleOf(m.email)} value={m.role} onChange={(e) => patch(m, { role: e.currentTarget.value as Role }, t.nowRole(m.email, e.currentTarget.value))}>
                    <option value="member">member</option>
                    <option value="admin">admin</option>
                  </select>
                </td>
                <td>{when(m.joinedAt)}</td>
                <td>{when(m.lastActiveAt)}</td>
                <td class="row">
                  <Show
                    when={m.status === 'active'}
                    fallback={
                      <button type="button" class="small" onClick={() => patch(m, { status: 'active' }, t.activated(m.email))}>
                        {t.activate}
                      </button>
                    }
                  >
                    <button type="button" class="small" onClick={() => patch(m, { status: 'suspended' }, t.suspendedToast(m.email))}>
                      {t.suspend}
                    </button>
                  </Show>
                  <button type="button" class="small" aria-expanded={factors()?.member.id === m.id} onClick={() => showFactors(m)}>
                    {t.secondFactor}
                  </button>
                  <button type="button" class="small danger" onClick={() => remove(m)}>
                    {t.remove}
                  </button>
                </td>
              </tr>
            )}
          </ListTable>
        )}
      </Async>
      <LoadMore list={members} />
      <Show when={factors()}>
        {(f) => (
          <div class="card" data-second-factor={f().member.email}>
            <h2>{t.factorsOf(f().member.email)}</h2>
            <ul>
              <li>{t.totp(f().summary.totp.enabled ? when(f().summary.totp.confirmedAt) : null)}</li>
              <li>{t.passkeys(f().summary.passkeys.count, f().summary.passkeys.lastUsedAt ? when(f().summary.passkeys.lastUsedAt) : null)}</li>
              <li>{t.codesLeft(f().summary.recoveryCodes.remaining)}</li>
            </ul>
            <Show
              when={f().summary.totp.enabled || f().summary.passkeys.count > 0 || f().summary.recoveryCodes.remaining > 0}
              fallback={<p class="muted">{t.nothingToReset}</p>}
            >
              <button type="button" class="danger" onClick={() => resetFactors(f().member)}>
                {t.reset}
              </button>
            </Show>
          </div>
        )}
      </Show>
    </>
  );
}
