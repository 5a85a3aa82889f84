import { createResource, createSignal, For, Index, Show } from 'solid-js';
import { api, enc, type Application, type AuthPolicy, type ProfileField, type Provider, type SignupPolicy } from '../api';
import { ErrorBox, toast, useAction } from '../ui';

const FIELD_TYPES = ['string', 'text', 'number', 'integer', 'boolean', 'email', 'url', 'date', 'select'];
const POLICIES: [SignupPolicy, string][] = [
  ['open', 'Open — anyone may create an account and join'],
  ['invite_only', 'Invitation only — only invited e-mail addresses'],
  ['closed', 'Closed — no new members'],
];

export function PolicyTab(props: { app: Application; onSaved: () => void }) {
  const [providers] = createResource(() => api.get<{ providers: Provider[] }>('/api/admin/auth/providers').then((d) => d.providers));
  const p = props.app.authPolicy;
  const [signup, setSignup] = createSignal<SignupPolicy>(p.signup_policy);
  const [allowed, setAllowed] = createSignal<string[]>([...p.allowed_providers]);
  const [fields, setFields] = createSignal<ProfileField[]>(p.profile_fields.map((f) => ({ ...f })));
  const save = useAction();

  const toggle = (id: string, on: boolean) => setAllowed((a) => (on ? [...a.filter((x) => x !== id), id] : a.filter((x) => x !== id)));
  const update = (i: number, patch: Partial<ProfileField>) => setFields((fs) => fs.map((f, j) => (j === i ? { ...f, ...patch } : f)));

  const submit = async (e: Event) => {
    e.preventDefault();
    const profile_fields = fields().map((f) => {
      const out: ProfileField = { key: f.key.trim(), label: f.label.trim(), type: f.type, required: f.required, user_editable: f.user_editable };
      if (f.type === 'select') out.options = (f.options ?? []).map((o) => o.trim()).filter(Boolean);
      if (f.description?.trim()) out.description = f.description.trim();
      return out;
    });
    const r = await save.run(() =>
      api.patch<AuthPolicy>(`/api/admin/applications/${enc(props.app.id)}/auth-policy`, {
        signup_policy: signup(),
        allowed_providers: allowed(),
        profile_fields,
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
                <th>Required</th>
                <th>User editable</th>
                <th />
              </tr>
            </thead>
            <tbody>
              <Index each={fields()}>
                {(f, i) => (
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
                        value={(f().options ?? []).join(', ')}
                        onInput={(e) => update(i, { options: e.currentTarget.value.split(',') })}
                        placeholder="a, b, c"
                        size={12}
                      />
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
                )}
              </Index>
            </tbody>
          </table>
        </Show>
        <p>
          <button type="button" onClick={() => setFields((fs) => [...fs, { key: '', label: '', type: 'string', required: false, user_editable: true }])}>
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
