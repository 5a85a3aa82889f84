/**
 * How the application's tokens are signed (issue 38): RS256 (the default), ES256 or EdDSA, with
 * the one line on compatibility an administrator needs before changing it
 * (docs/signing-algorithms.md has the sources).
 */
import { createSignal, For } from 'solid-js';
import { client, ok, type Application } from '../../api';
import { ErrorBox, Field, toast, useAction } from '../../ui';

type SigningAlg = Application['signingAlg'];

const t = {
  heading: 'Token signing',
  label: 'Signing algorithm',
  options: [
    ['RS256', 'RS256 — RSA (default; every OpenID Connect library accepts it)'],
    ['ES256', 'ES256 — ECDSA P-256 (small, fast signatures)'],
    ['EdDSA', 'EdDSA — Ed25519'],
  ] as [SigningAlg, string][],
  hint:
    'Covers its ID, access and logout tokens. Keep RS256 unless the app can be told which algorithm to expect: Immich and python-social-auth (Django) expect RS256 unless set otherwise, and Apache mod_auth_openidc on Debian 12 cannot check EdDSA. A change applies to new tokens; tokens already issued still verify.',
  save: 'Save token signing',
  saved: (alg: string) => `New tokens are signed with ${alg}.`,
};

export function SigningCard(props: { app: Application; onSaved: (app: Application) => void }) {
  const [alg, setAlg] = createSignal<SigningAlg>(props.app.signingAlg);
  const save = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const next = await save.run(() =>
      ok(client.PATCH('/api/admin/applications/{id}', { params: { path: { id: props.app.id } }, body: { signingAlg: alg() } })),
    );
    if (next) {
      props.onSaved(next);
      toast(t.saved(next.signingAlg));
    }
  };
  return (
    <>
      <h2>{t.heading}</h2>
      <form class="card" novalidate onSubmit={submit} data-testid="token-signing">
        <Field label={t.label} hint={t.hint}>
          {(a) => (
            <select {...a} name="signingAlg" value={alg()} onChange={(e) => setAlg(e.currentTarget.value as SigningAlg)}>
              <For each={t.options}>{([value, label]) => <option value={value}>{label}</option>}</For>
            </select>
          )}
        </Field>
        <ErrorBox error={save.error()} />
        <div class="actions">
          <button class="primary" type="submit" disabled={save.busy() || alg() === props.app.signingAlg}>
            {t.save}
          </button>
        </div>
      </form>
    </>
  );
}
