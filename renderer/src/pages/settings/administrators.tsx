/**
 * The owner's pages (spec administrators-and-people.md): who administers this Gatehouse and with
 * which role — name someone by e-mail, change a role, remove one (never the last owner) — and the
 * password policy every new password must meet.
 */
import { createResource, createSignal, For, Show } from 'solid-js';
import { client, ok, type Ok } from '../../api';
import { strings } from '../../strings';
import { confirmAction, DataTable, ErrorBox, Loading, toast, useAction, when } from '../../ui';
import { ApplicationPicker } from '../../application-picker';

type Administrator = Ok<'/api/admin/administrators', 'get'>['administrators'][number];
type Role = Administrator['role'];

const t = {
  title: 'Administrators',
  intro: 'People who may use this control panel, and what each may do. Everyone here signs in with a second factor.',
  roles: strings.nav.roles,
  roleHelp: {
    owner: 'Everything, including administrators, settings and operations.',
    people_manager: 'People, groups, invitations, sessions and second-factor resets, in every application.',
    app_manager: 'The listed applications only: their settings, members, invitations, API keys, branding and test sign-in.',
  } as Record<Role, string>,
  columns: ['Person', 'Role', 'Applications', 'Since', ''],
  change: 'Save',
  remove: 'Remove',
  removeTitle: (who: string) => `Remove ${who} as an administrator?`,
  removeBody: 'They keep their account, but can no longer use the control panel; their panel sign-ins end.',
  removed: (who: string) => `${who} is no longer an administrator.`,
  saved: (who: string) => `${who}'s role is saved.`,
  add: 'Name an administrator',
  addEmail: 'E-mail address of an existing person',
  addButton: 'Add',
  notFound: (email: string) => `Nobody has the e-mail address ${email}. Add them on the People page first.`,
  appsOf: (who: string) => `Applications ${who} manages`,
  newApps: 'Applications they manage',
  lastOwner: 'The last owner cannot be removed or demoted.',
  none: 'Nobody administers this Gatehouse by name yet: the admin token is the only way in. Name an owner below, or create one from the sign-in screen.',
};

const ROLES: Role[] = ['owner', 'people_manager', 'app_manager'];

function RoleEditor(props: { admin: Administrator; onSaved: () => void }) {
  const [role, setRole] = createSignal<Role>(props.admin.role);
  const [apps, setApps] = createSignal<string[]>([...props.admin.applications]);
  const action = useAction();
  const who = () => props.admin.name ?? props.admin.email;
  const save = async () => {
    const applications = role() === 'app_manager' ? apps() : undefined;
    const done = await action.run(() =>
      ok(client.PUT('/api/admin/administrators/{personId}', { params: { path: { personId: props.admin.personId } }, body: { role: role(), ...(applications ? { applications } : {}) } })),
    );
    if (done) {
      toast(t.saved(who()));
      props.onSaved();
    }
  };
  const remove = async () => {
    if (!(await confirmAction(t.removeTitle(who()), t.removeBody, t.remove))) return;
    // A 204 answers nothing: done is true once it has.
    const done = await action.run(async () => (await ok(client.DELETE('/api/admin/administrators/{personId}', { params: { path: { personId: props.admin.personId } } })), true));
    if (done) {
      toast(t.removed(who()));
      props.onSaved();
    }
  };
  return (
    <tr data-administrator={props.admin.email}>
      <td>
        <strong>{props.admin.name ?? props.admin.email}</strong> <span class="muted">{props.admin.email}</span>
      </td>
      <td>
        <select aria-label={`Role of ${who()}`} value={role()} onChange={(e) => setRole(e.currentTarget.value as Role)}>
          <For each={ROLES}>{(r) => <option value={r}>{t.roles[r]}</option>}</For>
        </select>
      </td>
      <td>
        <Show when={role() === 'app_manager'} fallback={<span class="muted">—</span>}>
          <ApplicationPicker label={t.appsOf(who())} value={apps()} onChange={setApps} />
        </Show>
      </td>
      <td>{when(props.admin.createdAt)}</td>
      <td class="row">
        <button type="button" onClick={save} disabled={action.busy()}>
          {t.change}
        </button>
        <button type="button" class="danger" onClick={remove} disabled={action.busy()}>
          {t.remove}
        </button>
        <ErrorBox error={action.error()} />
      </td>
    </tr>
  );
}

export function AdministratorsPage() {
  const [list, { refetch }] = createResource(() => ok(client.GET('/api/admin/administrators')));
  const [email, setEmail] = createSignal('');
  const [role, setRole] = createSignal<Role>('people_manager');
  const [apps, setApps] = createSignal<string[]>([]);
  const action = useAction();
  const add = async (e: Event) => {
    e.preventDefault();
    const address = email().trim().toLowerCase();
    const done = await action.run(async () => {
      const found = await ok(client.GET('/api/admin/people', { params: { query: { q: address, limit: 5 } } }));
      const person = found.people.find((p) => p.email === address);
      if (!person) throw new Error(t.notFound(address));
      const applications = role() === 'app_manager' ? apps() : undefined;
      return ok(client.PUT('/api/admin/administrators/{personId}', { params: { path: { personId: person.id } }, body: { role: role(), ...(applications ? { applications } : {}) } }));
    });
    if (done) {
      toast(t.saved(done.name ?? done.email));
      setEmail('');
      setApps([]);
      void refetch();
    }
  };
  return (
    <>
      <h1>{t.title}</h1>
      <p class="muted">{t.intro}</p>
      <ul class="role-help">
        <For each={ROLES}>
          {(r) => (
            <li>
              <strong>{t.roles[r]}</strong>: {t.roleHelp[r]}
            </li>
          )}
        </For>
      </ul>
      <Show when={!list.error} fallback={<ErrorBox error={list.error} />}>
        <Show when={list.latest} fallback={<Loading />}>
          {(l) => (
            <Show when={l().administrators.length} fallback={<p class="muted">{t.none}</p>}>
              <DataTable label={t.title} columns={t.columns} rows={l().administrators}>
                {(a) => <RoleEditor admin={a} onSaved={() => void refetch()} />}
              </DataTable>
            </Show>
          )}
        </Show>
      </Show>
      <form class="card" onSubmit={add} aria-label={t.add}>
        <h2>{t.add}</h2>
        <div class="row">
          <input type="email" aria-label={t.addEmail} placeholder={t.addEmail} value={email()} onInput={(e) => setEmail(e.currentTarget.value)} required />
          <select aria-label="Role" value={role()} onChange={(e) => setRole(e.currentTarget.value as Role)}>
            <For each={ROLES}>{(r) => <option value={r}>{t.roles[r]}</option>}</For>
          </select>
          <button type="submit" class="primary" disabled={action.busy()}>
            {t.addButton}
          </button>
        </div>
        <Show when={role() === 'app_manager'}>
          <ApplicationPicker label={t.newApps} value={apps()} onChange={setApps} />
        </Show>
        <ErrorBox error={action.error()} />
      </form>
    </>
  );
}

const p = {
  title: 'Password policy',
  intro: 'Every new password must meet this: at sign-up, reset, invitation, on the account page, and when an administrator sets one.',
  minLength: 'Minimum length',
  minLengthHint: '8 to 128 characters.',
  minStrength: 'Minimum strength',
  minStrengthHint: 'zxcvbn’s estimate of how hard the password is to guess.',
  strengths: ['0 – anything', '1 – weak', '2 – fair', '3 – strong', '4 – very strong'],
  rejectBreached: 'Refuse common passwords',
  rejectBreachedHint: 'Checked against a list of about 49,000 common passwords that ships with Gatehouse (no network).',
  save: 'Save',
  saved: 'The password policy is saved.',
  shown: 'What people see beside a new-password field:',
};

export function PasswordPolicyPage() {
  const [policy, { mutate }] = createResource(() => ok(client.GET('/api/admin/settings/password-policy')));
  const action = useAction();
  const save = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const done = await action.run(() =>
      ok(
        client.PATCH('/api/admin/settings/password-policy', {
          body: { minLength: Number(form.get('minLength')), minStrength: Number(form.get('minStrength')), rejectBreached: form.get('rejectBreached') === 'on' },
        }),
      ),
    );
    if (done) {
      mutate(done);
      toast(p.saved);
    }
  };
  return (
    <>
      <h1>{p.title}</h1>
      <p class="muted">{p.intro}</p>
      <Show when={!policy.error} fallback={<ErrorBox error={policy.error} />}>
        <Show when={policy.latest} fallback={<Loading />}>
          {(current) => (
            <form class="card" onSubmit={save} aria-label={p.title}>
              <label class="field">
                <span>{p.minLength}</span>
                <input type="number" name="minLength" min="8" max="128" value={current().minLength} required />
                <span class="hint">{p.minLengthHint}</span>
              </label>
              <label class="field">
                <span>{p.minStrength}</span>
                <select name="minStrength" value={String(current().minStrength)}>
                  <For each={p.strengths}>{(label, i) => <option value={String(i())}>{label}</option>}</For>
                </select>
                <span class="hint">{p.minStrengthHint}</span>
              </label>
              <label class="check">
                <input type="checkbox" name="rejectBreached" checked={current().rejectBreached} /> {p.rejectBreached}
              </label>
              <p class="hint">{p.rejectBreachedHint}</p>
              <p>
                {p.shown} <em data-testid="policy-hint">{current().hint}</em>
              </p>
              <ErrorBox error={action.error()} />
              <div class="actions">
                <button class="primary" type="submit" disabled={action.busy()}>
                  {p.save}
                </button>
              </div>
            </form>
          )}
        </Show>
      </Show>
    </>
  );
}
