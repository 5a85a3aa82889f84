/**
 * Single logout (OpenID Connect Back-Channel Logout): where Gatehouse tells the app that a person
 * signed out, and the log of what it sent.
 */
import { createResource, createSignal, Show } from 'solid-js';
import { client, fieldErrors, ok, type Application } from '../../api';
import { Async, ErrorBox, Field, ListTable, toast, useAction, when } from '../../ui';
import { backchannelLogoutUriErrors } from '../../validate';

const t = {
  intro:
    'When a person signs out of Gatehouse, or an administrator suspends or removes them, Gatehouse can tell this app at once, so its own session ends too ("if sign-in is shared, so is sign-out"). It sends a signed logout token to the address below, and retries for about a day if the app does not answer.',
  url: 'Back-channel logout URL',
  urlHint: 'An https address, or http on this network (localhost, a private address, *.lan, *.local). Leave empty to send nothing.',
  sid: 'The app needs the session id (sid)',
  sidHint:
    "Each token names the person (sub) and, for a sign-out, the session (sid) that the app's ID tokens carried, so the app can end just that session. When an administrator suspends or removes someone there is no single session: the token names only the person, and the app should end all of their sessions.",
  save: 'Save logout settings',
  saved: 'Logout settings saved.',
  recent: 'Recent logout deliveries',
  refresh: 'Refresh',
  table: 'Logout deliveries',
  columns: ['When', 'Why', 'Person', 'Status', 'Attempts', 'Last answer'],
  noUrl: 'No logout URL set: nothing is sent.',
  empty: 'No logout deliveries yet.',
  nextTry: (at: string) => ` next try ${at}`,
};

/** What ended the sign-in, in words. */
const REASONS: Record<string, string> = {
  sign_out: 'Signed out',
  end_session: 'Signed out from an app',
  session_revoked: 'Signed out a device',
  signed_out_elsewhere: 'Signed out everywhere else',
  replaced_by_other_person: 'Someone else signed in on the browser',
  password_changed: 'Changed password',
  password_reset: 'Reset password',
  second_factor_reset: 'Second factor reset',
  membership_suspended: 'Suspended by an administrator',
  membership_deleted: 'Removed by an administrator',
};

export function LogoutTab(props: { app: Application; onSaved: (app: Application) => void }) {
  const path = { id: props.app.id };
  const [uri, setUri] = createSignal(props.app.backchannelLogoutUri ?? '');
  const [sessionRequired, setSessionRequired] = createSignal(props.app.backchannelLogoutSessionRequired);
  const [log, { refetch }] = createResource(() =>
    ok(client.GET('/api/admin/applications/{id}/backchannel-logouts', { params: { path, query: { limit: 50 } } })).then((d) => d.deliveries),
  );
  const save = useAction();
  const server = () => fieldErrors(save.error());
  const errors = () => [...backchannelLogoutUriErrors(uri()), ...(server().backchannelLogoutUri ?? [])];
  const valid = () => !backchannelLogoutUriErrors(uri()).length;

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!valid()) return;
    const body = { backchannelLogoutUri: uri().trim() || null, backchannelLogoutSessionRequired: sessionRequired() };
    const next = await save.run(() => ok(client.PATCH('/api/admin/applications/{id}', { params: { path }, body })));
    if (next) {
      props.onSaved(next);
      toast(t.saved);
    }
  };

  return (
    <>
      <form class="card" novalidate onSubmit={submit}>
        <p>{t.intro}</p>
        <Field label={t.url} hint={t.urlHint} errors={errors()}>
          {(a) => (
            <input
              {...a}
              name="backchannelLogoutUri"
              type="url"
              value={uri()}
              onInput={(e) => setUri(e.currentTarget.value)}
              placeholder="https://notes.example.com/auth/backchannel-logout"
            />
          )}
        </Field>
        <label class="check">
          <input type="checkbox" name="backchannelLogoutSessionRequired" checked={sessionRequired()} onChange={(e) => setSessionRequired(e.currentTarget.checked)} />
          {t.sid}
        </label>
        <p class="hint">{t.sidHint}</p>
        <ErrorBox error={save.error()} fieldsShown />
        <div class="actions">
          <button class="primary" type="submit" disabled={save.busy() || !valid()}>
            {t.save}
          </button>
        </div>
      </form>
      <div class="row title-row">
        <h2>{t.recent}</h2>
        <button type="button" class="small" onClick={() => void refetch()}>
          {t.refresh}
        </button>
      </div>
      <Async resource={log}>
        {(list) => (
          <ListTable label={t.table} rows={list} columns={t.columns} empty={<>{props.app.backchannelLogoutUri ? t.empty : t.noUrl}</>}>
            {(d) => (
              <tr>
                <td>{when(d.createdAt)}</td>
                <td>{REASONS[d.reason] ?? d.reason}</td>
                <td>
                  <code>{d.subject}</code>
                </td>
                <td>
                  <span class={`badge ${d.status === 'succeeded' ? 'ok' : d.status === 'failed' ? 'bad' : 'warn'}`}>{d.status}</span>
                  <Show when={d.nextAttemptAt}>{(at) => <span class="hint">{t.nextTry(when(at()))}</span>}</Show>
                </td>
                <td>{d.attempts}</td>
                <td>{d.lastStatusCode ?? d.lastError ?? '—'}</td>
              </tr>
            )}
          </ListTable>
        )}
      </Async>
    </>
  );
}
