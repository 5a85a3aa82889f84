/**
 * Access: who may sign in to the application and how — who may join, the second factor, the
 * sign-in methods and profile fields (policy.tsx), the groups it is restricted to (its group
 * rule, `allowedGroups`: every protocol honours it), whether people are asked to consent, and the
 * applications it shares sign-in with.
 */
import { createResource, createSignal, For, Show } from 'solid-js';
import { A } from '@solidjs/router';
import { client, enc, fieldErrors, ok } from '../../api';
import { managesPeople, may } from '../../me';
import { GroupPicker } from '../../group-picker';
import { ErrorBox, Field, toast, useAction } from '../../ui';
import { PolicyTab } from './policy';
import type { SectionProps } from './sections';

const t = {
  allowed: 'Allowed groups',
  allowedIntro:
    'Restrict this application to people in certain directory groups. The rule holds for every way in: OpenID Connect sign-in and token refresh, forward auth, LDAP binds, SAML and RADIUS. Someone in an allowed group may join without an invitation, even when only invited people may join.',
  anyone: 'Everyone the sign-up policy admits (no group rule)',
  only: 'Only members of these groups',
  picker: 'Allowed groups',
  pickerHint: 'A person must be in at least one of them.',
  ids: 'Allowed group ids',
  idsHint: 'Group ids, separated by spaces or commas; a person must be in at least one.',
  pickOne: 'Choose at least one group, or let everyone in.',
  saveAllowed: 'Save allowed groups',
  savedAllowed: 'Allowed groups saved.',
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

const words = (text: string) => text.split(/[\s,]+/).filter(Boolean);
const sameList = (a: readonly string[] | null, b: readonly string[] | null) =>
  a === null || b === null ? a === b : a.length === b.length && a.every((x) => b.includes(x));

/** The group rule (`allowedGroups`): no rule, or the groups of which a person must be in one. */
function AllowedGroupsCard(props: SectionProps) {
  const [restricted, setRestricted] = createSignal(props.app.allowedGroups !== null);
  const [chosen, setChosen] = createSignal<string[]>(props.app.allowedGroups ?? []);
  const [typed, setTyped] = createSignal((props.app.allowedGroups ?? []).join(' '));
  const [checked, setChecked] = createSignal(false);
  const save = useAction();
  // The directory's groups are the people managers' (and owners'): an app manager types ids.
  const picks = () => managesPeople();
  const wanted = (): string[] | null => (restricted() ? (picks() ? chosen() : words(typed())) : null);
  const empty = () => restricted() && wanted()!.length === 0;
  const errors = () => [...(checked() && empty() ? [t.pickOne] : []), ...(fieldErrors(save.error()).allowedGroups ?? [])];
  const submit = async (e: Event) => {
    e.preventDefault();
    setChecked(true);
    if (empty()) return;
    const next = await save.run(() =>
      ok(client.PATCH('/api/admin/applications/{id}', { params: { path: { id: props.app.id } }, body: { allowedGroups: wanted() } })),
    );
    if (next) {
      setChecked(false);
      props.onSaved(next);
      toast(t.savedAllowed);
    }
  };
  return (
    <form class="card" novalidate onSubmit={submit} data-testid="allowed-groups">
      <fieldset class="grants">
        <legend>{t.allowed}</legend>
        <p class="hint">{t.allowedIntro}</p>
        <label class="check">
          <input type="radio" name="allowedGroups" value="any" checked={!restricted()} onChange={() => setRestricted(false)} />
          {t.anyone}
        </label>
        <label class="check">
          <input type="radio" name="allowedGroups" value="groups" checked={restricted()} onChange={() => setRestricted(true)} />
          {t.only}
        </label>
        <Show when={restricted()}>
          <Show
            when={picks()}
            fallback={
              <Field label={t.ids} hint={t.idsHint}>
                {(a) => <input {...a} name="allowedGroupIds" value={typed()} placeholder="family media-users" onInput={(e) => setTyped(e.currentTarget.value)} />}
              </Field>
            }
          >
            <GroupPicker label={t.picker} hint={t.pickerHint} value={chosen()} onChange={setChosen} hrefOf={(id) => `/groups/${encodeURIComponent(id)}`} />
          </Show>
        </Show>
        <div class="field-errors" aria-live="polite">
          <For each={errors()}>{(m) => <p>{m}</p>}</For>
        </div>
      </fieldset>
      <ErrorBox error={save.error()} fieldsShown />
      <div class="actions">
        <button class="primary" type="submit" disabled={save.busy() || sameList(wanted(), props.app.allowedGroups)}>
          {t.saveAllowed}
        </button>
      </div>
    </form>
  );
}

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
      <AllowedGroupsCard {...props} />
      <ConsentCard {...props} />
      <SharedSignIn {...props} />
    </>
  );
}
