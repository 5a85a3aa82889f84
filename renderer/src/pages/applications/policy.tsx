import { createMemo, createResource, createSignal, For, Index, Match, Show, Switch } from 'solid-js';
import { client, fieldErrors, ok, type Application, type MfaPolicy, type ProfileField, type SignupPolicy } from '../../api';
import { draftOf, FIELD_TYPES, fieldForSave, hasMaxLength, hasRange, limitOf, profileFieldErrors, type FieldDraft } from '../../profile-fields';
import { ErrorBox, TableScroll, toast, useAction } from '../../ui';
import { loadProviders } from '../settings/providers';

const t = {
  policies: [
    ['open', 'Open — anyone may create an account and join'],
    ['invite_only', 'Invitation only — only invited e-mail addresses'],
    ['closed', 'Closed — no new members'],
  ] as [SignupPolicy, string][],
  whoMayJoin: 'Who may join',
  mfa: [
    ['optional', 'Optional — members may add an authenticator app or a passkey'],
    ['required', 'Required — members must sign in with a second factor (those without one set it up at their next sign-in)'],
  ] as [MfaPolicy, string][],
  secondFactor: 'Second factor',
  mfaHint: 'An application can also ask for a second factor on one sign-in with acr_values=urn:gatehouse:acr:mfa; ID tokens say how a person signed in (acr, amr).',
  methods: 'Sign-in methods',
  loadingProviders: 'Loading providers…',
  configured: 'configured',
  notConfigured: 'not configured',
  needs: (vars: string[]) => `Needs ${vars.join(', ')}`,
  methodsHint: 'A provider that is not configured on the server cannot be used even when allowed; see Sign-in providers.',
  noMethod: 'Allow at least one sign-in method, or nobody can sign in.',
  profileFields: 'Profile fields',
  noFields: 'No custom profile fields. Members have only name and e-mail.',
  table: 'Profile fields',
  columns: ['Key', 'Label', 'Type', 'Options (select)', 'Limits', 'Required', 'User editable', ''],
  addField: 'Add profile field',
  remove: 'Remove',
  saving: 'Saving…',
  save: 'Save sign-in policy',
  saved: 'Sign-in policy saved.',
};

export function PolicyTab(props: { app: Application; onSaved: () => void }) {
  const [providers] = createResource(loadProviders);
  const p = props.app.authPolicy;
  const [signup, setSignup] = createSignal<SignupPolicy>(p.signup_policy);
  const [allowed, setAllowed] = createSignal<string[]>([...p.allowed_providers]);
  const [fields, setFields] = createSignal<FieldDraft[]>(p.profile_fields.map(draftOf));
  const [mfa, setMfa] = createSignal<MfaPolicy>(p.mfa);
  const save = useAction();

  const toggle = (id: string, on: boolean) => setAllowed((a) => (on ? [...a.filter((x) => x !== id), id] : a.filter((x) => x !== id)));
  const update = (i: number, patch: Partial<ProfileField>) => setFields((fs) => fs.map((d, j) => (j === i ? { ...d, field: { ...d.field, ...patch } } : d)));
  const setOptionsText = (i: number, optionsText: string) => setFields((fs) => fs.map((d, j) => (j === i ? { ...d, optionsText } : d)));

  const problems = createMemo(() => [
    ...(allowed().length ? [] : [t.noMethod]),
    ...profileFieldErrors(fields().map(fieldForSave)),
    ...Object.values(fieldErrors(save.error())).flat(),
  ]);

  const submit = async (e: Event) => {
    e.preventDefault();
    const profile_fields = fields().map(fieldForSave);
    if (!allowed().length || profileFieldErrors(profile_fields).length) return;
    const r = await save.run(() =>
      ok(
        client.PATCH('/api/admin/applications/{id}/auth-policy', {
          params: { path: { id: props.app.id } },
          body: { signup_policy: signup(), allowed_providers: allowed(), profile_fields, mfa: mfa() },
        }),
      ),
    );
    if (r) {
      toast(t.saved);
      props.onSaved();
    }
  };

  return (
    <form novalidate onSubmit={submit}>
      <div class="card">
        <h2>{t.whoMayJoin}</h2>
        <For each={t.policies}>
          {([value, label]) => (
            <label class="check">
              <input type="radio" name="signup_policy" value={value} checked={signup() === value} onChange={() => setSignup(value)} />
              {label}
            </label>
          )}
        </For>
      </div>
      <div class="card">
        <h2>{t.secondFactor}</h2>
        <For each={t.mfa}>
          {([value, label]) => (
            <label class="check">
              <input type="radio" name="mfa" value={value} checked={mfa() === value} onChange={() => setMfa(value)} />
              {label}
            </label>
          )}
        </For>
        <p class="hint">{t.mfaHint}</p>
      </div>
      <div class="card">
        <h2>{t.methods}</h2>
        <Show when={providers()} fallback={<p class="muted">{t.loadingProviders}</p>}>
          <For each={providers()}>
            {(pr) => (
              <label class="check">
                <input type="checkbox" name={`provider-${pr.id}`} checked={allowed().includes(pr.id)} onChange={(e) => toggle(pr.id, e.currentTarget.checked)} />
                {pr.name}{' '}
                {pr.configured ? <span class="badge ok">{t.configured}</span> : <span class="badge warn" title={t.needs(pr.env_vars)}>{t.notConfigured}</span>}
              </label>
            )}
          </For>
        </Show>
        <p class="hint">{t.methodsHint}</p>
      </div>
      <div class="card">
        <h2>{t.profileFields}</h2>
        <Show when={fields().length} fallback={<p class="muted">{t.noFields}</p>}>
          <TableScroll label={t.table}>
          <table>
            <thead>
              <tr>
                <For each={t.columns}>{(c) => <th>{c}</th>}</For>
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
                      <select aria-label="Field type" value={f().type} onChange={(e) => update(i, { type: e.currentTarget.value as ProfileField['type'] })}>
                        <For each={FIELD_TYPES}>{(type) => <option value={type}>{type}</option>}</For>
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
                        {t.remove}
                      </button>
                    </td>
                  </tr>
                  );
                }}
              </Index>
            </tbody>
          </table>
          </TableScroll>
        </Show>
        <p>
          <button type="button" onClick={() => setFields((fs) => [...fs, draftOf({ key: '', label: '', type: 'string', required: false, user_editable: true })])}>
            {t.addField}
          </button>
        </p>
      </div>
      <div class="field-errors" aria-live="polite" data-testid="policy-errors">
        <For each={problems()}>{(m) => <p>{m}</p>}</For>
      </div>
      <ErrorBox error={save.error()} fieldsShown />
      <div class="actions">
        <button class="primary" type="submit" disabled={save.busy() || problems().length > 0}>
          {save.busy() ? t.saving : t.save}
        </button>
      </div>
    </form>
  );
}
