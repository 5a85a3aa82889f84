/**
 * LDAP for one application (spec ldap.md, "Per application"; docs/ldap.md): turning directory
 * access on or off, the service account's bind DN, and its password, shown once when LDAP is
 * turned on or a new one is made. Members bind with app passwords from their account page.
 */
import { createResource, createSignal, Show } from 'solid-js';
import { client, ok, type Application } from '../../api';
import { confirmAction, CopyField, ErrorBox, toast, useAction } from '../../ui';

const t = {
  heading: 'LDAP directory',
  enable: 'Let LDAP clients (a NAS, Jellyfin, Apache, nslcd) read this application\'s members and the groups',
  hint: 'Its service account searches the directory; members sign in there with app passwords they make on their account page (never their own password). The server must run with GATEHOUSE_LDAP=on.',
  save: 'Save LDAP',
  saved: 'LDAP settings saved.',
  bindDn: 'Bind DN',
  check: 'Check it from the LDAP client\'s machine (asks for the password)',
  baseDn: 'Base DN',
  newPassword: 'Service account password — shown only now.',
  password: 'Bind password',
  rotate: 'New service account password',
  rotateTitle: 'Make a new service account password?',
  rotateText: 'The current password stops working at once; the LDAP client needs the new one.',
  rotateAction: 'Make new password',
};

export function LdapCard(props: { app: Application; onSaved: (app: Application) => void }) {
  const id = props.app.id;
  const [enabled, setEnabled] = createSignal(props.app.ldap.enabled);
  const [password, setPassword] = createSignal<string | null>(null);
  const save = useAction();
  const rotation = useAction();
  // Where the directory listens, for the copyable check (docs/ldap.md "Check it works").
  const [overview] = createResource(() => props.app.ldap.enabled || undefined, () => ok(client.GET('/api/admin/overview')));
  const listener = () => {
    const ldap = overview()?.ldap;
    return ldap?.enabled ? ldap : undefined;
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    const next = await save.run(() => ok(client.PATCH('/api/admin/applications/{id}', { params: { path: { id } }, body: { ldap: { enabled: enabled() } } })));
    if (!next) return;
    setPassword(next.ldapPassword ?? (next.ldap.enabled ? password() : null));
    props.onSaved(next);
    toast(t.saved);
  };
  const rotate = async () => {
    if (!(await confirmAction(t.rotateTitle, t.rotateText, t.rotateAction))) return;
    const r = await rotation.run(() => ok(client.POST('/api/admin/applications/{id}/ldap/password', { params: { path: { id } } })));
    if (r) setPassword(r.password);
  };

  return (
    <>
      <h2>{t.heading}</h2>
      <form class="card" novalidate onSubmit={submit} data-testid="ldap">
        <label class="check">
          <input type="checkbox" name="ldapEnabled" checked={enabled()} onChange={(e) => setEnabled(e.currentTarget.checked)} />
          {t.enable}
        </label>
        <p class="hint">{t.hint}</p>
        <Show when={props.app.ldap.enabled}>
          <CopyField label={t.bindDn} value={props.app.ldap.bindDn} />
          <Show when={listener()}>
            {(l) => (
              <>
                <CopyField label={t.baseDn} value={l().baseDn} />
                <Show when={l().url}>{(url) => <CopyField label={t.check} value={`ldapwhoami -x -H ${url()} -D '${props.app.ldap.bindDn}' -W`} />}</Show>
              </>
            )}
          </Show>
        </Show>
        <Show when={password()}>
          {(p) => (
            <div class="notice">
              {t.newPassword}
              <CopyField label={t.password} value={p()} secret />
            </div>
          )}
        </Show>
        <ErrorBox error={save.error() ?? rotation.error()} fieldsShown />
        <div class="actions">
          <button class="primary" type="submit" disabled={save.busy() || enabled() === props.app.ldap.enabled}>
            {t.save}
          </button>
          <Show when={props.app.ldap.enabled}>
            <button type="button" class="danger" onClick={rotate} disabled={rotation.busy()}>
              {t.rotate}
            </button>
          </Show>
        </div>
      </form>
    </>
  );
}
