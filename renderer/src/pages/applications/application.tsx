/**
 * One application, by task (sections.tsx): Overview, Connect (by protocol), Test sign-in, Access,
 * People, Claims, Advanced. Every section and part has its own address, which loads it directly
 * (a bookmark, a link from a colleague, a reload); the page's older addresses lead to where their
 * screens are now. A role sees the sections its calls allow (me.ts `may`).
 */
import { createResource, For, Show, type JSX } from 'solid-js';
import { Dynamic } from 'solid-js/web';
import { A, Navigate, useParams } from '@solidjs/router';
import { client, enc, ok, type Application } from '../../api';
import { may } from '../../me';
import { ErrorBox, Loading } from '../../ui';
import { LEGACY_PATHS, SECTIONS, type Part, type Section, type SectionProps } from './sections';

const t = {
  sections: 'Application sections',
  noSection: 'There is no such section.',
  notYours: 'This part of the application is for its managers.',
  kind: { web: 'Web app', spa: 'Single-page app', native: 'Desktop or mobile app' } as Record<string, string>,
};

/** The sections and parts a caller may see for this application. */
const visible = <T extends { needs: string }>(entries: readonly T[], id: string) => entries.filter((entry) => may(entry.needs, id));

/** A row of links, each to its own address; the current one marked for screen readers too. */
function Tabs(props: { label: string; class: string; links: { href: string; label: string; current: boolean }[] }) {
  return (
    <nav class={props.class} aria-label={props.label}>
      <For each={props.links}>
        {(link) => (
          <A href={link.href} classList={{ active: link.current }} aria-current={link.current ? 'page' : undefined} end>
            {link.label}
          </A>
        )}
      </For>
    </nav>
  );
}

function SectionView(props: { section: Section; part: string | undefined; base: string; shared: SectionProps }): JSX.Element {
  const parts = () => visible(props.section.parts ?? [], props.shared.app.id);
  const chosen = (): Part | undefined => {
    const list = parts();
    if (props.part) return list.find((p) => p.path === props.part);
    const preferred = props.section.defaultPart?.(props.shared.app, props.shared.preset);
    return list.find((p) => p.path === preferred) ?? list[0];
  };
  const sectionBase = () => `${props.base}/${props.section.path}`;
  return (
    <Show
      when={props.section.parts}
      fallback={
        <Show when={!props.part} fallback={<p>{t.noSection}</p>}>
          <Dynamic component={props.section.component!} {...props.shared} />
        </Show>
      }
    >
      <Show when={chosen()} fallback={<p>{t.noSection}</p>}>
        {(part) => (
          <>
            <Show when={parts().length > 1}>
              <Tabs
                class="subtabs"
                label={props.section.partsLabel ?? props.section.label}
                links={parts().map((p) => ({ href: `${sectionBase()}/${p.path}`, label: p.label, current: p === part() }))}
              />
            </Show>
            <Dynamic component={part().component} {...props.shared} />
          </>
        )}
      </Show>
    </Show>
  );
}

export function ApplicationPage() {
  const params = useParams<{ id: string; section?: string; part?: string }>();
  const [app, { mutate, refetch }] = createResource(
    () => params.id,
    (id) => ok(client.GET('/api/admin/applications/{id}', { params: { path: { id } } })),
  );
  // The app preset it came from: its protocol (where Connect opens) and the scopes its app asks for.
  const [preset] = createResource(
    () => app.latest?.preset?.id,
    (id) => ok(client.GET('/api/admin/presets/{id}', { params: { path: { id } } })),
  );
  const base = () => `/applications/${enc(params.id)}`;
  const section = () => SECTIONS.find((s) => s.path === (params.section ?? ''));
  const legacy = () => (params.section !== undefined && !params.part ? LEGACY_PATHS[params.section] : undefined);
  const onSaved = (next?: Application) => (next ? mutate(next) : void refetch());
  return (
    // Non-keyed Show: saving a section updates `a()` in place instead of re-creating it (which
    // would lose one-time secrets it is showing).
    <Show when={legacy() === undefined} fallback={<Navigate href={`${base()}${legacy() ? `/${legacy()}` : ''}`} />}>
      <Show when={!app.error} fallback={<ErrorBox error={app.error} />}>
        <Show when={app.latest} fallback={<Loading />}>
          {(a) => {
            const sections = () => visible(SECTIONS, a().id);
            const shared: SectionProps = {
              get app() {
                return a();
              },
              onSaved,
              get preset() {
                return preset.latest;
              },
            };
            return (
              <>
                <header class="app-header">
                  <h1>
                    {a().name} <code>{a().id}</code>
                  </h1>
                  <span class="muted">{t.kind[a().clientType] ?? a().clientType}</span>
                </header>
                <Tabs
                  class="tabs sections"
                  label={t.sections}
                  links={sections().map((s) => ({ href: s.path ? `${base()}/${s.path}` : base(), label: s.label, current: s === section() }))}
                />
                <Show when={section()} fallback={<p>{t.noSection}</p>}>
                  {(s) => (
                    <Show when={sections().includes(s())} fallback={<p class="muted">{t.notYours}</p>}>
                      <SectionView section={s()} part={params.part} base={base()} shared={shared} />
                    </Show>
                  )}
                </Show>
              </>
            );
          }}
        </Show>
      </Show>
    </Show>
  );
}
