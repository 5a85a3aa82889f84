/**
 * Connect: how the app reaches Gatehouse, one tab per protocol (sections.tsx CONNECT_PROTOCOLS).
 * Each tab starts with what to type into the app (the set-up text, presets.tsx) when the app preset
 * connects that way, then that protocol's settings:
 * - OpenID Connect: the audience, redirect URIs, grants and the client secret;
 * - forward auth: the protected hosts and the proxy configuration (forward-auth.tsx);
 * - LDAP: the directory's service account (ldap.tsx);
 * - SAML: the SP's metadata import, its settings and Gatehouse's metadata URL and certificate (saml.tsx);
 * - RADIUS: the network gear and VLANs (radius.tsx).
 */
import { createSignal, For, Show } from 'solid-js';
import { client, fieldErrors, ok, type GrantType } from '../../api';
import { GRANTS } from '../../grants';
import { confirmAction, CopyField, ErrorBox, Field, toast, useAction } from '../../ui';
import { audienceErrors, redirectUriErrors, redirectUriHint, redirectUriList } from '../../validate';
import { IntegrationSnippet } from './snippet';
import { PresetStatusCard, SetupView, type ShownSecrets } from './presets';
import { ForwardAuthTab } from './forward-auth';
import { LdapCard } from './ldap';
import { RadiusTab } from './radius';
import { SamlTab } from './saml';
import type { SectionProps } from './sections';

const t = {
  settings: 'Connection settings',
  audience: 'Audience',
  audienceHint: "The aud claim of this app's access tokens; its backend checks it.",
  redirects: 'Redirect URIs',
  grants: 'How the app gets tokens',
  postLogout: 'Post-logout redirect URIs',
  postLogoutHint:
    'Where the application may send people after signing them out (post_logout_redirect_uri), one per line. Left empty, the redirect URIs above are accepted instead.',
  save: 'Save connection settings',
  saved: 'Connection settings saved.',
  developers: 'For developers: the issuer, the client and token verification',
  secret: 'Client secret',
  secretHint: 'Gatehouse keeps only a hash of it: a lost secret is replaced, not shown again.',
  newSecret: 'New client secret — shown only now, and filled into the set-up text above.',
  rotate: 'Make a new client secret',
  rotateTitle: 'Make a new client secret?',
  rotateText: 'The current secret stops working at once; the app needs the new one.',
  rotateAction: 'Make new secret',
};

/** The set-up text and the preset's status, on the tab of the protocol the app connects with. */
function PresetSetup(props: SectionProps & { protocol: string; secrets?: ShownSecrets }) {
  const ours = () => (props.preset ? props.preset.protocol === props.protocol : props.protocol === 'oidc');
  return (
    <Show when={ours()}>
      <PresetStatusCard app={props.app} onSaved={props.onSaved} />
      <SetupView appId={props.app.id} secrets={props.secrets} />
    </Show>
  );
}

function ConnectionSettings(props: SectionProps) {
  const id = props.app.id;
  const [audience, setAudience] = createSignal(props.app.audience);
  const [redirects, setRedirects] = createSignal(props.app.redirectUris.join('\n'));
  const [grants, setGrants] = createSignal<GrantType[]>([...props.app.grantTypes]);
  const toggleGrant = (grant: GrantType, on: boolean) => setGrants((g) => (on ? [...g.filter((x) => x !== grant), grant] : g.filter((x) => x !== grant)));
  const shownPostLogout = (props.app.postLogoutRedirectUris ?? []).join('\n');
  const [postLogout, setPostLogout] = createSignal(shownPostLogout);
  // An empty box is "not set" (null), not an empty list: sign-outs then return to the redirect URIs.
  const postLogoutErrors = () => (redirectUriList(postLogout()).length ? redirectUriErrors(postLogout(), props.app.clientType) : []);
  const save = useAction();
  const server = () => fieldErrors(save.error());
  const errors = {
    audience: () => [...audienceErrors(audience()), ...(server().audience ?? [])],
    redirects: () => [...redirectUriErrors(redirects(), props.app.clientType), ...(server().redirectUris ?? [])],
    postLogout: () => [...postLogoutErrors(), ...(server().postLogoutRedirectUris ?? [])],
  };
  const valid = () => !audienceErrors(audience()).length && !redirectUriErrors(redirects(), props.app.clientType).length && !postLogoutErrors().length;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!valid()) return;
    const next = await save.run(() =>
      ok(
        client.PATCH('/api/admin/applications/{id}', {
          params: { path: { id } },
          body: {
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
  return (
    <form class="card" novalidate onSubmit={submit} data-testid="connection-settings">
      <h2>{t.settings}</h2>
      <Field label={t.redirects} hint={redirectUriHint(props.app.clientType === 'native')} errors={errors.redirects()}>
        {(a) => <textarea {...a} name="redirectUris" value={redirects()} onInput={(e) => setRedirects(e.currentTarget.value)} />}
      </Field>
      <Field label={t.audience} hint={t.audienceHint} errors={errors.audience()}>
        {(a) => <input {...a} name="audience" value={audience()} onInput={(e) => setAudience(e.currentTarget.value)} />}
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
      <ErrorBox error={save.error()} fieldsShown />
      <div class="actions">
        <button class="primary" type="submit" disabled={save.busy() || !valid()}>
          {t.save}
        </button>
      </div>
    </form>
  );
}

export function OidcPart(props: SectionProps) {
  const [secret, setSecret] = createSignal<string | null>(null);
  const rotation = useAction();
  const rotate = async () => {
    if (!(await confirmAction(t.rotateTitle, t.rotateText, t.rotateAction))) return;
    const r = await rotation.run(() => ok(client.POST('/api/admin/applications/{id}/client-secret', { params: { path: { id: props.app.id } } })));
    if (r) setSecret(r.clientSecret);
  };
  return (
    <>
      <PresetSetup {...props} protocol="oidc" secrets={{ clientSecret: secret() }} />
      <details class="card developers">
        <summary>{t.developers}</summary>
        <IntegrationSnippet app={props.app} clientSecret={secret() ?? undefined} />
      </details>
      <ConnectionSettings {...props} />
      <Show when={props.app.clientType === 'web'}>
        <div class="card" data-testid="client-secret">
          <h2>{t.secret}</h2>
          <p class="hint">{t.secretHint}</p>
          <Show when={secret()}>
            {(s) => (
              <div class="notice">
                {t.newSecret}
                <CopyField label={t.secret} value={s()} secret />
              </div>
            )}
          </Show>
          <ErrorBox error={rotation.error()} />
          <div class="actions">
            <button type="button" class="danger" onClick={rotate} disabled={rotation.busy()}>
              {t.rotate}
            </button>
          </div>
        </div>
      </Show>
    </>
  );
}

export function ForwardAuthPart(props: SectionProps) {
  return (
    <>
      <PresetSetup {...props} protocol="forward-auth" />
      <ForwardAuthTab app={props.app} onSaved={props.onSaved} />
    </>
  );
}

export function RadiusPart(props: SectionProps) {
  return (
    <>
      <PresetSetup {...props} protocol="radius" />
      <RadiusTab app={props.app} onSaved={props.onSaved} />
    </>
  );
}

export function SamlPart(props: SectionProps) {
  return (
    <>
      <PresetSetup {...props} protocol="saml" />
      <SamlTab app={props.app} onSaved={props.onSaved} />
    </>
  );
}

export function LdapPart(props: SectionProps) {
  return (
    <>
      <PresetSetup {...props} protocol="ldap" />
      <LdapCard app={props.app} onSaved={props.onSaved} />
    </>
  );
}
