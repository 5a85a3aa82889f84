/** One application: tabs for settings, set-up (the app preset it came from and what to configure in the app), activity, sign-in policy, claims, members, invitations, API keys, webhooks, single logout, forward auth, RADIUS, test sign-in. */
import { createResource, Match, Show, Switch } from 'solid-js';
import { A, useParams } from '@solidjs/router';
import { client, enc, ok } from '../../api';
import { managesApplication } from '../../me';
import { ErrorBox, Loading } from '../../ui';
import { SettingsTab } from './settings';
import { PolicyTab } from './policy';
import { MembersTab } from './members';
import { ClaimsTab } from './claims';
import { InvitationsTab } from './invitations';
import { ApiKeysTab } from './api-keys';
import { WebhooksTab } from './webhooks';
import { LogoutTab } from './logout';
import { TestSignInTab } from './test-sign-in';
import { ForwardAuthTab } from './forward-auth';
import { RadiusTab } from './radius';
import { PresetStatusCard, SetupView } from './presets';
import { ActivityPanel } from '../overview/activity-lazy';

const t = {
  sections: 'Application sections',
  noSection: 'There is no such section.',
  peopleOnly: "As a people manager you see this application's members, invitations and activity.",
};

const TABS = [
  ['', 'Settings'],
  ['setup', 'Setup'],
  ['activity', 'Activity'],
  ['sign-in', 'Sign-in policy'],
  ['claims', 'Claims'],
  ['members', 'Members'],
  ['invitations', 'Invitations'],
  ['api-keys', 'API keys'],
  ['webhooks', 'Webhooks'],
  ['logout', 'Single logout'],
  ['forward-auth', 'Forward auth'],
  ['radius', 'RADIUS'],
  ['test', 'Test sign-in'],
] as const;
const PEOPLE_TABS: readonly string[] = ['activity', 'members', 'invitations'];

export function ApplicationPage() {
  const params = useParams<{ id: string; tab?: string }>();
  const [app, { mutate, refetch }] = createResource(
    () => params.id,
    (id) => ok(client.GET('/api/admin/applications/{id}', { params: { path: { id } } })),
  );
  const base = () => `/applications/${enc(params.id)}`;
  return (
    // Non-keyed Show: saving a tab updates `a()` in place instead of re-creating the tabs (which
    // would lose one-time secrets they are showing).
    <Show when={!app.error} fallback={<ErrorBox error={app.error} />}>
    <Show when={app.latest} fallback={<Loading />}>
      {(a) => (
        <>
          <h1>
            {a().name} <code>{a().id}</code>
          </h1>
          <nav class="tabs" aria-label={t.sections}>
            {/* A people manager sees an application's members, invitations and activity only (issue 33). */}
            {TABS.filter(([tab]) => managesApplication(a().id) || PEOPLE_TABS.includes(tab)).map(([tab, label]) => (
              <A href={tab ? `${base()}/${tab}` : base()} class={(params.tab ?? '') === tab ? 'active' : ''} end>
                {label}
              </A>
            ))}
          </nav>
          <Switch fallback={<p>{t.noSection}</p>}>
            <Match when={!params.tab && !managesApplication(a().id)}>
              <p class="muted">{t.peopleOnly}</p>
            </Match>
            <Match when={!params.tab}>
              <SettingsTab app={a()} onSaved={(next) => mutate(next)} />
            </Match>
            <Match when={params.tab === 'activity'}>
              <ActivityPanel applicationId={a().id} />
            </Match>
            <Match when={params.tab === 'sign-in'}>
              <PolicyTab app={a()} onSaved={() => void refetch()} />
            </Match>
            <Match when={params.tab === 'claims'}>
              <ClaimsTab app={a()} onSaved={(next) => mutate(next)} />
            </Match>
            <Match when={params.tab === 'members'}>
              <MembersTab app={a()} />
            </Match>
            <Match when={params.tab === 'invitations'}>
              <InvitationsTab app={a()} />
            </Match>
            <Match when={params.tab === 'api-keys'}>
              <ApiKeysTab app={a()} />
            </Match>
            <Match when={params.tab === 'webhooks'}>
              <WebhooksTab app={a()} onSaved={(next) => mutate(next)} />
            </Match>
            <Match when={params.tab === 'logout'}>
              <LogoutTab app={a()} onSaved={(next) => mutate(next)} />
            </Match>
            <Match when={params.tab === 'forward-auth'}>
              <ForwardAuthTab app={a()} onSaved={(next) => mutate(next)} />
            </Match>
            <Match when={params.tab === 'radius'}>
              <RadiusTab app={a()} onSaved={(next) => mutate(next)} />
            </Match>
            <Match when={params.tab === 'test'}>
              <TestSignInTab app={a()} onSaved={(next) => mutate(next)} />
            </Match>
            <Match when={params.tab === 'setup'}>
              <PresetStatusCard app={a()} onSaved={(next) => mutate(next)} />
              <SetupView appId={a().id} />
            </Match>
          </Switch>
        </>
      )}
    </Show>
    </Show>
  );
}
