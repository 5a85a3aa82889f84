/**
 * An application's Overview: what it is and how it connects, at a glance, each line linking to
 * where it is changed; the next step while nobody has signed in yet (Test sign-in); a preset
 * update waiting; and its activity over 30 days. People managers see the activity.
 */
import { createResource, For, Show } from 'solid-js';
import { A } from '@solidjs/router';
import { client, enc, ok } from '../../api';
import { may } from '../../me';
import { CopyField } from '../../ui';
import { ActivityPanel } from '../overview/activity-lazy';
import { presetStatusText } from './presets';
import type { SectionProps } from './sections';

const t = {
  glance: 'At a glance',
  clientId: 'Client ID',
  preset: 'Made from',
  presetLine: (name: string, version: number, status: string) => `the ${name} preset, version ${version} (${status})`,
  connects: 'Connects by',
  oidc: (n: number) => `OpenID Connect, ${n} redirect URI${n === 1 ? '' : 's'}`,
  forwardAuth: (hosts: string[]) => `forward auth for ${hosts.join(', ')}`,
  ldap: 'LDAP',
  nothing: 'nothing yet',
  joins: 'Who may join',
  signup: { open: 'anyone (open sign-up)', invite_only: 'invited people only', closed: 'nobody new (closed)' } as Record<string, string>,
  mfaRequired: ' · second factor required',
  change: 'change',
  next: 'Next step',
  nobodyYet: (name: string) => `Nobody has signed in to ${name} yet. Put the settings from Connect into the app, then try a sign-in here.`,
  test: 'Test sign-in',
  connect: 'Connect',
  updated: (latest: number) => `The app preset has a newer version (${latest}) with settings that differ from these.`,
  review: 'Review in Connect',
};

export function AppOverview(props: SectionProps) {
  const id = () => props.app.id;
  const base = () => `/applications/${enc(id())}`;
  const manages = () => may('PATCH /applications/:id', id());
  const [activity] = createResource(
    () => (manages() ? id() : undefined),
    (appId) => ok(client.GET('/api/admin/applications/{id}/activity', { params: { path: { id: appId }, query: { days: 30 } } })),
  );
  const [status] = createResource(
    () => (manages() && props.app.preset ? id() : undefined),
    (appId) => ok(client.GET('/api/admin/applications/{id}/preset', { params: { path: { id: appId } } })),
  );
  const nobodyYet = () => activity.latest !== undefined && activity.latest.days.every((d) => d.signIns === 0);
  const ways = () => [
    ...(props.app.grantTypes.includes('authorization_code') && !(props.preset && props.preset.protocol !== 'oidc') ? [{ text: t.oidc(props.app.redirectUris.length), part: 'oidc' }] : []),
    ...(props.app.forwardAuth ? [{ text: t.forwardAuth(props.app.forwardAuth.hosts), part: 'forward-auth' }] : []),
    ...(props.app.ldap.enabled ? [{ text: t.ldap, part: 'ldap' }] : []),
  ];
  return (
    <>
      <Show when={manages() && nobodyYet()}>
        <div class="card next-step" data-testid="next-step">
          <h2>{t.next}</h2>
          <p>{t.nobodyYet(props.app.name)}</p>
          <div class="actions start">
            <A class="button primary" href={`${base()}/test`}>
              {t.test}
            </A>
            <A class="button" href={`${base()}/connect`}>
              {t.connect}
            </A>
          </div>
        </div>
      </Show>
      <Show when={status.latest?.differences.length}>
        <p class="notice" data-testid="preset-update">
          {t.updated(status.latest!.latestVersion)} <A href={`${base()}/connect`}>{t.review}</A>
        </p>
      </Show>
      <div class="card" data-testid="at-a-glance">
        <h2>{t.glance}</h2>
        <CopyField label={t.clientId} value={props.app.id} />
        <dl class="kv glance">
          <Show when={props.preset}>
            {(p) => (
              <>
                <dt>{t.preset}</dt>
                <dd>{t.presetLine(p().name, props.app.preset!.version, presetStatusText(p()))}</dd>
              </>
            )}
          </Show>
          <dt>{t.connects}</dt>
          <dd>
            <For each={ways()} fallback={<span class="muted">{t.nothing}</span>}>
              {(way, i) => (
                <>
                  {i() > 0 ? '; ' : ''}
                  <Show when={manages()} fallback={way.text}>
                    <A href={`${base()}/connect/${way.part}`}>{way.text}</A>
                  </Show>
                </>
              )}
            </For>
          </dd>
          <dt>{t.joins}</dt>
          <dd>
            {t.signup[props.app.authPolicy.signup_policy] ?? props.app.authPolicy.signup_policy}
            {props.app.authPolicy.mfa === 'required' ? t.mfaRequired : ''}
            <Show when={may('PATCH /applications/:id/auth-policy', id())}>
              {' '}
              (<A href={`${base()}/access`}>{t.change}</A>)
            </Show>
          </dd>
        </dl>
      </div>
      <ActivityPanel applicationId={props.app.id} />
    </>
  );
}
