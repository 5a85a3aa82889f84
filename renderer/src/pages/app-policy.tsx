import { createResource, createSignal, For, Index, Match, Show, Switch } from 'solid-js';
import { api, enc, type Application, type AuthPolicy, type MfaPolicy, type ProfileField, type Provider, type SignupPolicy } from '../api';
import { draftOf, FIELD_TYPES, fieldForSave, hasMaxLength, hasRange, limitOf, type FieldDraft } from '../profile-fields';
import { ErrorBox, toast, useAction } from '../ui';
const POLICIES: [SignupPolicy, string][] = [
  ['open', 'Open — anyone may create an account and join'],
  ['invite_only', 'Invitation only — only invited e-mail addresses'],
  ['closed', 'Closed — no new members'],
];
const MFA: [MfaPolicy, string][] = [
  ['optional', 'Optional — members may add an authenticator app or a passkey'],
  ['required', 'Required — members must sign in with a second factor (those without one set it up at their next sign-in)'],
];

export function PolicyTab(props: { app: Application; onSaved: () => void }) {
  const [providers] = createResource(() => api.get<{ providers: Provider[] }>('/api/admin/auth/providers').then((d) => d.providers));
  const p = props.app.authPolicy;
  const [signup, setSignup] = createSignal<SignupPolicy>(p.signup_policy);
  const [allowed, setAllowed] = createSignal<string[]>([...p.allowed_providers]);
  const [fields, setFields] = createSignal<FieldDraft[]>(p.profile_fields.map(draftOf));
  const [mfa, setMfa] = createSignal<MfaPolicy>(p.mfa ?? 'optional');
  const save = useAction();

  const toggle = (id: string, on: boolean) => setAllowed((a) => (on ? [...a.filter((x) => x !== id), id] : a.filter((x) => x !== id)));
  const update = (i: number, patch: Partial<ProfileField>) => setFields((fs) => fs.map((d, j) => (j === i ? { ...d, field: { ...d.field, ...patch } } : d)));
  const setOptionsText = (i: number, optionsText: string) => setFields((fs) => fs.map((d, j) => (j === i ? { ...d, optionsText } : d)));

  const submit = async (e: Event) => {
    e.preventDefault();
    const profile_fields = fields().map(fieldForSave);
    const r = await save.run(() =>
      api.patch<AuthPolicy>(`/api/admin/applications/${enc(props.app.id)}/auth-policy`, {
        signup_policy: signup(),
        allowed_providers: allowed(),
        profile_fields,
        mfa: mfa(),
      }),
    );
    if (r) {
      toast('Sign-in policy saved.');
      props.onSaved();
    }
  };

  return (
    <form onSubmit={submit}>
      <div class="card">
        <h2>Who may join</h2>
        <For each={POLICIES}>
          {([value, label]) => (
            <label class="check">
              <input type="radio" name="signup_policy" value={value} checked={signup() === value} onChange={() => setSignup(value)} />
              {label}
            </label>
          )}
        </For>
      </div>
      <div class="card">
        <h2>Second factor</h2>
        <For each={MFA}>
          {([value, label]) => (
            <label class="check">
              <input type="radio" name="mfa" value={value} checked={mfa() === value} onChange={() => setMfa(value)} />
              {label}
            </label>
          )}
        </For>
        <p class="hint">
          Applications can also ask for a second factor on one sign-in with <code>acr_values=urn:gatehouse:acr:mfa</code>; ID tokens say how a person
          signed in (<code>acr</code>, <code>amr</code>).
        </p>
      </div>
      <div class="card">
        <h2>Sign-in methods</h2>
        <Show when={providers()} fallback={<p class="muted">Loading providers…</p>}>
          <For each={providers()}>
            {(pr) => (
              <label class="check">
                <input type="checkbox" name={`provider-${pr.id}`} checked={allowed().includes(pr.id)} onChange={(e) => toggle(pr.id, e.currentTarget.checked)} />
                {pr.name}{' '}
                {pr.configured ? <span class="badge ok">configured</span> : <span class="badge warn" title={`Needs ${pr.env_vars.join(', ')}`}>not configured</span>}
              </label>
            )}
          </For>
        </Show>
        <p class="hint">A provider that is not configured on the server cannot be used even when allowed; see Sign-in providers.</p>
      </div>
      <div class="card">
        <h2>Profile fields</h2>
        <Show when={fields().length} fallback={<p class="muted">No custom profile fields. Members have only name and e-mail.</p>}>
          <table>
            <thead>
              <tr>
                <th>Key</th>
                <th>Label</th>
                <th>Type</th>
                <th>Options (select)</th>
                <th>Limits</th>
                <th>Required</th>
                <th>User editable</th>
                <th />
              </tr>
            </thead>
            <tbody>
              <Index each={fields()}>
                {(d, i) => {
                  const f = () => d().field;
                  return (
                  <tr>
                    <td>
                      <input aria-label="Field key" value={f().key} onInput={(e) => update(i, { key: e.currentTarget.value })} required size={12} />
                    </td>
                    <td>
                      <input aria-label="Field label" value={f().label} onInput={(e) => update(i, { label: e.currentTarget.value })} required size={14} />
                    </td>
                    <td>
                      <select aria-label="Field type" value={f().type} onChange={(e) => update(i, { type: e.currentTarget.value })}>
                        <For each={FIELD_TYPES}>{(t) => <option value={t}>{t}</option>}</For>
                      </select>
                    </td>
                    <td>
                      <input
                        aria-label="Options"
                        disabled={f().type !== 'select'}
                        value={d().optionsText}
                        onInput={(e) => setOptionsText(i, e.currentTarget.value)}
                        placeholder="a, b, c"
                        size={12}
                      />
                    </td>
                    <td>
                      {/* onChange, not onInput: a half-typed number ("-", "1e") reads as empty and would be wiped. */}
                      <Switch fallback={<span class="muted">—</span>}>
                        <Match when={hasRange(f().type)}>
                          <span class="row">
                            <input type="number" aria-label="Minimum" placeholder="min" value={f().min ?? ''} onChange={(e) => update(i, { min: limitOf(e.currentTarget.value) })} step="any" style={{ width: '6em' }} />
                            <input type="number" aria-label="Maximum" placeholder="max" value={f().max ?? ''} onChange={(e) => update(i, { max: limitOf(e.currentTarget.value) })} step="any" style={{ width: '6em' }} />
                          </span>
                        </Match>
                        <Match when={hasMaxLength(f().type)}>
                          <input type="number" aria-label="Maximum length" placeholder="max length" value={f().max_length ?? ''} onChange={(e) => update(i, { max_length: limitOf(e.currentTarget.value) })} min={1} max={10000} step={1} style={{ width: '7em' }} />
                        </Match>
                      </Switch>
                    </td>
                    <td>
                      <input type="checkbox" aria-label="Required" checked={f().required} onChange={(e) => update(i, { required: e.currentTarget.checked })} />
                    </td>
                    <td>
                      <input type="checkbox" aria-label="User editable" checked={f().user_editable} onChange={(e) => update(i, { user_editable: e.currentTarget.checked })} />
                    </td>
                    <td>
                      <button type="button" class="small danger" onClick={() => setFields((fs) => fs.filter((_, j) => j !== i))}>
                        Remove
                      </button>
                    </td>
                  </tr>
                  );
                }}
              </Index>
            </tbody>
          </table>
        </Show>
        <p>
          <button type="button" onClick={() => setFields((fs) => [...fs, draftOf({ key: '', label: '', type: 'string', required: false, user_editable: true })])}>
            Add profile field
          </button>
        </p>
      </div>
      <ErrorBox error={save.error()} />
      <div class="actions">
        <button class="primary" type="submit" disabled={save.busy()}>
          {save.busy() ? 'Saving…' : 'Save sign-in policy'}
        </button>
      </div>
    </form>
  );
}
