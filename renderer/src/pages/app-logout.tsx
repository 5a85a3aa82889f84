/**
 * Single logout (OpenID Connect Back-Channel Logout): where Gatehouse tells the app that a person
 * signed out, and the log of what it sent.
 */
import { createResource, createSignal, Show } from 'solid-js';
import { api, enc, listOf, type Application } from '../api';
import { Async, ErrorBox, ListTable, toast, useAction, when } from '../ui';

interface LogoutDelivery {
  id: string;
  status: string;
  reason: string;
  subject: string;
  sessionId: string | null;
  attempts: number;
  createdAt: string;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
}

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
  const appPath = `/api/admin/applications/${enc(props.app.id)}`;
  const [uri, setUri] = createSignal(props.app.backchannelLogoutUri ?? '');
  const [sessionRequired, setSessionRequired] = createSignal(props.app.backchannelLogoutSessionRequired);
  const [log, { refetch }] = createResource(() => api.get<unknown>(`${appPath}/backchannel-logouts?limit=50`).then((d) => listOf<LogoutDelivery>(d)));
  const save = useAction();

  const submit = async (e: Event) => {
    e.preventDefault();
    const next = await save.run(() =>
      api.patch<Application>(appPath, { backchannelLogoutUri: uri().trim() || null, backchannelLogoutSessionRequired: sessionRequired() }),
    );
    if (next) {
      props.onSaved(next);
      toast('Logout settings saved.');
    }
  };

  return (
    <>
      <form class="card" onSubmit={submit}>
        <p>
          When a person signs out of Gatehouse, or an administrator suspends or removes them, Gatehouse can tell this app at
          once, so its own session ends too ("if sign-in is shared, so is sign-out"). It sends a signed logout token to the
          address below, and retries for about a day if the app does not answer.
        </p>
        <label class="field">
          <span>Back-channel logout URL</span>
          <input
            name="backchannelLogoutUri"
            type="url"
            value={uri()}
            onInput={(e) => setUri(e.currentTarget.value)}
            placeholder="https://notes.example.com/auth/backchannel-logout"
          />
          <span class="hint">
            An https address, or http on this network (localhost, a private address, *.lan, *.local). Leave empty to send nothing.
          </span>
        </label>
        <label class="check">
          <input type="checkbox" name="backchannelLogoutSessionRequired" checked={sessionRequired()} onChange={(e) => setSessionRequired(e.currentTarget.checked)} />
          The app needs the session id (sid)
        </label>
        <p class="hint">
          Each token names the person (sub) and, for a sign-out, the session (sid) that the app's ID tokens carried, so the app can end
          just that session. When an administrator suspends or removes someone there is no single session: the token names only the
          person, and the app should end all of their sessions.
        </p>
        <ErrorBox error={save.error()} />
        <div class="actions">
          <button class="primary" type="submit" disabled={save.busy()}>
            Save logout settings
          </button>
        </div>
      </form>
      <div class="row" style={{ 'justify-content': 'space-between' }}>
        <h2>Recent logout deliveries</h2>
        <button type="button" class="small" onClick={() => void refetch()}>
          Refresh
        </button>
      </div>
      <Async resource={log}>
        {(list) => (
          <ListTable
            rows={list}
            columns={['When', 'Why', 'Person', 'Status', 'Attempts', 'Last answer']}
            empty={<Show when={props.app.backchannelLogoutUri} fallback={<>No logout URL set: nothing is sent.</>}>No logout deliveries yet.</Show>}
          >
            {(d) => (
              <tr>
                <td>{when(d.createdAt)}</td>
                <td>{REASONS[d.reason] ?? d.reason}</td>
                <td>
                  <code>{d.subject}</code>
                </td>
                <td>
                  <span class={`badge ${d.status === 'succeeded' ? 'ok' : d.status === 'failed' ? 'bad' : 'warn'}`}>{d.status}</span>
                  <Show when={d.nextAttemptAt}>{(at) => <span class="hint"> next try {when(at())}</span>}</Show>
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
