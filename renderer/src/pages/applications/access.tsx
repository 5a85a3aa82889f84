/**
 * Access: who may sign in to the application and how — who may join, the second factor, the
 * sign-in methods and profile fields (policy.tsx), whether people are asked to consent, and the
 * applications it shares sign-in with.
 */
import { createResource, createSignal, For, Show } from 'solid-js';
import { A } from '@solidjs/router';
import { client, enc, ok } from '../../api';
import { may } from '../../me';
import { ErrorBox, toast, useAction } from '../../ui';
import { PolicyTab } from './policy';
import type { SectionProps } from './sections';

const t = {
  consent: 'Consent',
  implicit: 'Implicit: you consent for your team; people are not asked',
  explicit: 'Explicit: each person approves what the app asks for, once, and can withdraw it on their account page',
  saveConsent: 'Save consent',
  savedConsent: 'Consent saved.',
  shared: 'Shared sign-in',
  ownSignIn: 'Own sign-in: signing in here signs in to this application alone.',
  sharesWith: 'Signing in here signs in to ',
  noOther: 'no other application yet',
  through: ' too, through the shared sign-in ',
  manage: 'Shared sign-in groups',
  othersOf: (id: string) => `Signing in here signs in to the other applications of the shared sign-in “${id}” too.`,
};

function ConsentCard(props: SectionProps) {
  const [consent, setConsent] = createSignal(props.app.consent);
  const save = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const next = await save.run(() => ok(client.PATCH('/api/admin/applications/{id}', { params: { path: { id: props.app.id } }, body: { consent: consent() } })));
    if (next) {
      props.onSaved(next);
      toast(t.savedConsent);
    }
  };
  return (
    <form class="card" novalidate onSubmit={submit} data-testid="consent">
      <fieldset>
        <legend>{t.consent}</legend>
        <label class="check">
          <input type="radio" name="consent" value="implicit" checked={consent() === 'implicit'} onChange={() => setConsent('implicit')} />
          {t.implicit}
        </label>
        <label class="check">
          <input type="radio" name="consent" value="explicit" checked={consent() === 'explicit'} onChange={() => setConsent('explicit')} />
          {t.explicit}
        </label>
      </fieldset>
      <ErrorBox error={save.error()} />
      <div class="actions">
        <button class="primary" type="submit" disabled={save.busy() || consent() === props.app.consent}>
          {t.saveConsent}
        </button>
      </div>
    </form>
  );
}

/** Which applications a sign-in here also signs in to (DESIGN §4.8: its SSO group). */
function SharedSignIn(props: SectionProps) {
  // The group's members are the owner's to read (admin-policy.ts); others see its id.
  const [group] = createResource(
    () => (may('GET /sso-groups/:id') ? props.app.ssoGroupId : null),
    (gid) => ok(client.GET('/api/admin/sso-groups/{id}', { params: { path: { id: gid } } })),
  );
  return (
    <div class="card">
      <h2>{t.shared}</h2>
      <Show when={!props.app.ssoGroupId}>
        <p class="muted" data-testid="sso-sharing">{t.ownSignIn}</p>
      </Show>
      <Show when={props.app.ssoGroupId && !may('GET /sso-groups/:id')}>
        <p data-testid="sso-sharing">{t.othersOf(props.app.ssoGroupId!)}</p>
      </Show>
      <Show when={group()}>
        {(g) => (
          <p data-testid="sso-sharing">
            {t.sharesWith}
            <For each={g().applicationIds.filter((other) => other !== props.app.id)} fallback={<span class="muted">{t.noOther}</span>}>
              {(other, i) => (
                <>
                  {i() > 0 ? ', ' : ''}
                  <A href={`/applications/${enc(other)}`}>{other}</A>
                </>
              )}
            </For>
            {t.through}
            <strong>{g().name}</strong>.
          </p>
        )}
      </Show>
      <Show when={may('GET /sso-groups')}>
        <p>
          <A href="/sso-groups">{t.manage}</A>
        </p>
      </Show>
    </div>
  );
}

export function AccessSection(props: SectionProps) {
  return (
    <>
      <PolicyTab app={props.app} onSaved={() => props.onSaved()} />
      <ConsentCard {...props} />
      <SharedSignIn {...props} />
    </>
  );
}
