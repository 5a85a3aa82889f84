/**
 * The panel's front door (spec administrators-and-people.md):
 * - first run (no owner yet): create the owner — e-mail, name, password under the policy, and the
 *   admin token that proves this is the machine's operator — then on to "Sign in with Gatehouse",
 *   where the second factor is enrolled;
 * - otherwise "Sign in with Gatehouse" (the built-in client, hosted pages, second factor), with
 *   "Use the admin token" as the other way in;
 * - /admin/signed-in: where that sign-in comes back with its code.
 */
import { createResource, createSignal, onMount, Show } from 'solid-js';
import { client, ok } from '../../api';
import { session, type PanelSignIn } from '../../session';
import { strings } from '../../strings';
import { ErrorBox, Loading, useAction } from '../../ui';

const t = {
  ...strings.signIn,
  firstRun: 'Set up Gatehouse',
  firstRunLead: 'Create the owner: the first administrator, who can do everything. Next, you will set up a second factor for this account.',
  email: 'Your e-mail address',
  name: 'Your name',
  password: 'Password',
  repeat: 'The same password again',
  mismatch: 'The two passwords differ.',
  adminToken: 'Admin token',
  adminTokenHint: 'Proves you run this server. ',
  create: 'Create the owner',
  noOwner: 'Nobody administers this Gatehouse by name yet. Create the owner account (you will add a second factor next), or use the admin token.',
  createOwner: 'Create the owner account',
  orToken: 'Or use the admin token:',
  creating: 'Creating…',
};

export type SetupStatus = { ownerExists: boolean; passwordHint: string; panelSignIn: PanelSignIn };

export async function loadSetup(): Promise<SetupStatus> {
  const status = (await ok(client.GET('/api/setup'))) as SetupStatus;
  session.configure(status.panelSignIn);
  return status;
}

function TokenHint() {
  const [before, file, between, command, after] = t.hintWhere('<data dir>/admin-token', 'gatehouse admin-token');
  return (
    <>
      {before}
      <code>{file}</code>
      {between}
      <code>{command}</code>
      {after}
    </>
  );
}

function TokenForm() {
  const [value, setValue] = createSignal('');
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const token = value().trim();
    const answer = await action.run(() => ok(client.GET('/api/admin/overview', { headers: { authorization: `Bearer ${token}` } })));
    if (answer !== undefined) session.signIn(token);
  };
  return (
    <form onSubmit={submit}>
      <label class="field">
        <span>{t.token}</span>
        <input type="password" name="adminToken" autocomplete="current-password" value={value()} onInput={(e) => setValue(e.currentTarget.value)} required />
        <span class="hint">
          <TokenHint /> {t.hint}
        </span>
      </label>
      <ErrorBox error={action.error()} />
      <div class="actions">
        <button type="submit" disabled={action.busy() || !value().trim()}>
          {action.busy() ? t.checking : t.useToken}
        </button>
      </div>
    </form>
  );
}

function FirstRun(props: { status: SetupStatus }) {
  const [form, setForm] = createSignal({ email: '', name: '', password: '', repeat: '', adminToken: '' });
  const action = useAction();
  const set = (key: keyof ReturnType<typeof form>) => (e: { currentTarget: HTMLInputElement }) => setForm({ ...form(), [key]: e.currentTarget.value });
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = form();
    if (f.password !== f.repeat) return action.setError(new Error(t.mismatch));
    const created = await action.run(() =>
      ok(
        client.POST('/api/admin/setup/owner', {
          body: { email: f.email.trim(), name: f.name.trim(), password: f.password },
          headers: { authorization: `Bearer ${f.adminToken.trim()}` },
        }),
      ),
    );
    if (created !== undefined) await session.startPanelSignIn();
  };
  return (
    <form class="card" onSubmit={submit} aria-label={t.firstRun}>
      <h1>{t.firstRun}</h1>
      <p>{t.firstRunLead}</p>
      <label class="field">
        <span>{t.email}</span>
        <input type="email" name="email" autocomplete="email" required value={form().email} onInput={set('email')} autofocus />
      </label>
      <label class="field">
        <span>{t.name}</span>
        <input name="name" autocomplete="name" required value={form().name} onInput={set('name')} />
      </label>
      <label class="field">
        <span>{t.password}</span>
        <input type="password" name="password" autocomplete="new-password" required value={form().password} onInput={set('password')} aria-describedby="owner-password-hint" />
        <span class="hint" id="owner-password-hint">
          {props.status.passwordHint}
        </span>
      </label>
      <label class="field">
        <span>{t.repeat}</span>
        <input type="password" name="repeat" autocomplete="new-password" required value={form().repeat} onInput={set('repeat')} />
      </label>
      <label class="field">
        <span>{t.adminToken}</span>
        <input type="password" name="adminToken" autocomplete="off" required value={form().adminToken} onInput={set('adminToken')} />
        <span class="hint">
          {t.adminTokenHint}
          <TokenHint />
        </span>
      </label>
      <ErrorBox error={action.error()} />
      <div class="actions">
        <button class="primary" type="submit" disabled={action.busy()}>
          {action.busy() ? t.creating : t.create}
        </button>
      </div>
    </form>
  );
}

export function SignInScreen(props: { failure?: string | undefined }) {
  const [status] = createResource(loadSetup);
  const [setUp, setSetUp] = createSignal(false);
  const action = useAction();
  return (
    <main class="signin">
      <Show when={!status.error} fallback={<ErrorBox error={status.error} />}>
        <Show when={status()} fallback={<Loading />}>
          {(s) => (
            <Show when={!setUp()} fallback={<FirstRun status={s()} />}>
              <div class="card">
                <h1>{t.title}</h1>
                <Show when={session.expiredNotice()}>
                  <div class="notice">{t.expired}</div>
                </Show>
                <Show when={props.failure}>
                  <div class="error" role="alert">
                    {t.failed(props.failure!)}
                  </div>
                </Show>
                <Show
                  when={s().ownerExists}
                  fallback={
                    <>
                      <p>{t.noOwner}</p>
                      <div class="actions">
                        <button class="primary" type="button" onClick={() => setSetUp(true)}>
                          {t.createOwner}
                        </button>
                      </div>
                    </>
                  }
                >
                  <p class="muted">{t.withGatehouseHint}</p>
                  <div class="actions">
                    <button class="primary" type="button" disabled={action.busy()} onClick={() => void action.run(() => session.startPanelSignIn())}>
                      {t.withGatehouse}
                    </button>
                  </div>
                  <ErrorBox error={action.error()} />
                </Show>
                <p class="divider">{t.orToken}</p>
                <TokenForm />
              </div>
            </Show>
          )}
        </Show>
      </Show>
    </main>
  );
}

/** /admin/signed-in, and a reload of a panel that was signed in with Gatehouse (silent sign-in). */
export function PanelSignInLanding(props: { onDone: (failure?: string) => void }) {
  onMount(async () => {
    await loadSetup();
    if (location.pathname.startsWith('/admin/signed-in')) {
      const result = await session.finishPanelSignIn();
      // A silent sign-in that needs the person (login_required, …) just shows the sign-in screen.
      props.onDone(result.ok || result.silent ? undefined : result.error);
    } else {
      await session.startPanelSignIn(true);
    }
  });
  return (
    <main class="signin">
      <Loading label={t.signingIn} />
    </main>
  );
}
