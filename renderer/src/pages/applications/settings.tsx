import { createResource, createSignal, For, Show } from 'solid-js';
import { A, useNavigate } from '@solidjs/router';
import { client, enc, fieldErrors, ok, type Application, type GrantType } from '../../api';
import { GRANTS } from '../../grants';
import { confirmAction, CopyField, ErrorBox, Field, toast, useAction } from '../../ui';
import { redirectUriHint, audienceErrors, redirectUriErrors, redirectUriList, requiredText } from '../../validate';
import { IntegrationSnippet } from './snippet';
import { BrandingCard } from './branding';
import { SigningCard } from './signing';
import { LdapCard } from './ldap';

const t = {
  name: 'Name',
  theName: 'The name',
  audience: 'Audience',
  redirects: 'Redirect URIs',
  grants: 'How the app gets tokens',
  postLogout: 'Post-logout redirect URIs',
  postLogoutHint:
    'Where the application may send people after signing them out (post_logout_redirect_uri), one per line. Left empty, the redirect URIs above are accepted instead.',
  facts: (type: string, created: string) => `Type: ${type} · created ${created}`,
  ownSignIn: 'Own sign-in (not in a shared sign-in).',
  sharesWith: 'Shares sign-in with ',
  noOther: 'no other application yet',
  through: ' through the shared sign-in ',
  save: 'Save settings',
  saved: 'Settings saved.',
  integration: 'Integration',
  danger: 'Danger zone',
  newSecret: 'New client secret — shown only now.',
  clientSecret: 'Client secret',
  rotate: 'Rotate client secret',
  rotateTitle: 'Rotate the client secret?',
  rotateText: 'The current secret stops working at once; the app needs the new one.',
  rotateAction: 'Rotate',
  remove: 'Delete application',
  removeTitle: (name: string) => `Delete ${name}?`,
  removeText: 'Its members, invitations, API keys and webhook history are deleted too. This cannot be undone.',
  removed: (name: string) => `${name} deleted.`,
};

export function SettingsTab(props: { app: Application; onSaved: (app: Application) => void }) {
  const navigate = useNavigate();
  const id = props.app.id;
  const [name, setName] = createSignal(props.app.name);
  const [audience, setAudience] = createSignal(props.app.audience);
  const [redirects, setRedirects] = createSignal(props.app.redirectUris.join('\n'));
  const [grants, setGrants] = createSignal<GrantType[]>([...props.app.grantTypes]);
  const toggleGrant = (grant: GrantType, on: boolean) => setGrants((g) => (on ? [...g.filter((x) => x !== grant), grant] : g.filter((x) => x !== grant)));
  const shownPostLogout = (props.app.postLogoutRedirectUris ?? []).join('\n');
  const [postLogout, setPostLogout] = createSignal(shownPostLogout);
  // An empty box is "not set" (null), not an empty list: sign-outs then return to the redirect URIs.
  const postLogoutErrors = () => (redirectUriList(postLogout()).length ? redirectUriErrors(postLogout(), props.app.clientType) : []);
  const [secret, setSecret] = createSignal<string | null>(null);
  const save = useAction();
  const danger = useAction();
  const [group] = createResource(
    () => props.app.ssoGroupId,
    (gid) => ok(client.GET('/api/admin/sso-groups/{id}', { params: { path: { id: gid } } })),
  );
  const server = () => fieldErrors(save.error());
  const errors = {
    name: () => [...requiredText(name(), t.theName), ...(server().name ?? [])],
    audience: () => [...audienceErrors(audience()), ...(server().audience ?? [])],
    redirects: () => [...redirectUriErrors(redirects(), props.app.clientType), ...(server().redirectUris ?? [])],
    postLogout: () => [...postLogoutErrors(), ...(server().postLogoutRedirectUris ?? [])],
  };
  const valid = () =>
    !requiredText(name(), t.theName).length && !audienceErrors(audience()).length && !redirectUriErrors(redirects(), props.app.clientType).length && !postLogoutErrors().length;

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!valid()) return;
    const next = await save.run(() =>
      ok(
        client.PATCH('/api/admin/applications/{id}', {
          params: { path: { id } },
          body: {
            name: name().trim(),
            audience: audience().trim(),
            redirectUris: redirectUriList(redirects()),
            // Sent only when edited (an empty list set through the API shows as empty too).
            ...(postLogout() === shownPostLogout ? {} : { postLogoutRedirectUris: redirectUriList(postLogout()).length ? redirectUriList(postLogout()) : null }),
            // In the canonical order, so an unchanged set reads as unchanged.
            grantTypes: GRANTS.map((g) => g.id).filter((g) => grants().includes(g)),
          },
        }),
      ),
    );
    if (next) {
      props.onSaved(next);
      toast(t.saved);
    }
  };
  const rotate = async () => {
    if (!(await confirmAction(t.rotateTitle, t.rotateText, t.rotateAction))) return;
    const r = await danger.run(() => ok(client.POST('/api/admin/applications/{id}/client-secret', { params: { path: { id } } })));
    if (r) setSecret(r.clientSecret);
  };
  const remove = async () => {
    if (!(await confirmAction(t.removeTitle(props.app.name), t.removeText))) return;
    const done = await danger.run(async () => (await ok(client.DELETE('/api/admin/applications/{id}', { params: { path: { id } } })), true));
    if (done) {
      toast(t.removed(props.app.name));
      navigate('/applications');
    }
  };

  return (
    <>
      <form class="card" novalidate onSubmit={submit}>
        <Field label={t.name} errors={errors.name()}>
          {(a) => <input {...a} name="name" value={name()} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        <Field label={t.audience} errors={errors.audience()}>
          {(a) => <input {...a} name="audience" value={audience()} onInput={(e) => setAudience(e.currentTarget.value)} />}
        </Field>
        <Field label={t.redirects} hint={redirectUriHint(props.app.clientType === 'native')} errors={errors.redirects()}>
          {(a) => <textarea {...a} name="redirectUris" value={redirects()} onInput={(e) => setRedirects(e.currentTarget.value)} />}
        </Field>
        <Field label={t.postLogout} hint={t.postLogoutHint} errors={errors.postLogout()}>
          {(a) => <textarea {...a} name="postLogoutRedirectUris" value={postLogout()} onInput={(e) => setPostLogout(e.currentTarget.value)} />}
        </Field>
        <fieldset class="grants" data-testid="grant-types">
          <legend>{t.grants}</legend>
          <For each={GRANTS}>
            {(g) => {
              const unavailable = () => g.unavailable?.(props.app.clientType);
              return (
                <div class="grant">
                  <label class="check">
                    <input
                      type="checkbox"
                      name={`grant-${g.id}`}
                      checked={grants().includes(g.id)}
                      disabled={Boolean(unavailable()) && !grants().includes(g.id)}
                      onChange={(e) => toggleGrant(g.id, e.currentTarget.checked)}
                    />
                    {g.label}
                  </label>
                  <p class="hint">
                    {g.help}
                    <Show when={unavailable()}>{(why) => <> {why()}</>}</Show>
                  </p>
                </div>
              );
            }}
          </For>
          <Show when={server().grantTypes}>{(messages) => <div class="field-errors" aria-live="polite">{messages().join(' ')}</div>}</Show>
        </fieldset>
        <p class="hint">{t.facts(props.app.clientType, new Date(props.app.createdAt).toLocaleString())}</p>
        <p data-testid="sso-sharing">
          <Show when={group()} fallback={<span class="muted">{t.ownSignIn}</span>}>
            {(g) => (
              <>
                {t.sharesWith}
                <For each={g().applicationIds.filter((other) => other !== id)} fallback={<span class="muted">{t.noOther}</span>}>
                  {(other, i) => (
                    <>
                      {i() > 0 ? ', ' : ''}
                      <A href={`/applications/${enc(other)}`}>{other}</A>
                    </>
                  )}
                </For>
                {t.through}
                <A href="/sso-groups">{g().name}</A>.
              </>
            )}
          </Show>
        </p>
        <ErrorBox error={save.error()} fieldsShown />
        <div class="actions">
          <button class="primary" type="submit" disabled={save.busy() || !valid()}>
            {t.save}
          </button>
        </div>
      </form>
      <BrandingCard app={props.app} onSaved={props.onSaved} />
      <SigningCard app={props.app} onSaved={props.onSaved} />
      <LdapCard app={props.app} onSaved={props.onSaved} />
      <h2>{t.integration}</h2>
      <IntegrationSnippet app={props.app} />
      <h2>{t.danger}</h2>
      <div class="card">
        <Show when={secret()}>
          {(s) => (
            <div class="notice">
              {t.newSecret}
              <CopyField label={t.clientSecret} value={s()} secret />
            </div>
          )}
        </Show>
        <ErrorBox error={danger.error()} />
        <div class="row">
          <Show when={props.app.clientType === 'web'}>
            <button type="button" class="danger" onClick={rotate}>
              {t.rotate}
            </button>
          </Show>
          <button type="button" class="danger" onClick={remove}>
            {t.remove}
          </button>
        </div>
      </div>
    </>
  );
}
