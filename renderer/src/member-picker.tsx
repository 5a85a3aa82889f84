/**
 * Choosing one member of an application: a search box (name or address) and the matches in a
 * list, the first one chosen until another is. The Claims preview and Test sign-in "as a member"
 * share it.
 */
import { createMemo, createResource, createSignal, For, Show, type JSX } from 'solid-js';
import { client, ok } from './api';
import { Field } from './ui';

const t = {
  find: 'Find a member',
  findHint: 'Name or e-mail address',
  member: 'Member',
  noMembers: 'No members yet.',
  noMatch: 'No member matches.',
};

export function createMemberPicker(appId: () => string) {
  const [query, setQuery] = createSignal('');
  const [members] = createResource(
    () => ({ id: appId(), q: query().trim() }),
    ({ id, q }) => ok(client.GET('/api/admin/applications/{id}/users', { params: { path: { id }, query: { limit: 50, ...(q ? { q } : {}) } } })).then((d) => d.users),
  );
  const [member, setMember] = createSignal('');
  /** The chosen member's membership id while they are among the matches, else the first match's. */
  const chosen = () => {
    const list = members.latest ?? [];
    return list.find((m) => m.id === member())?.id ?? list[0]?.id;
  };
  /** Whether the application has had members since this was shown (a search with no match keeps the fields). */
  const hasMembers = createMemo((had: boolean) => had || Boolean(members.latest?.length), false);
  /** "No members yet", once the first list came back empty. */
  const empty = (): JSX.Element => (
    <Show when={!hasMembers() && members.state === 'ready'}>
      <p class="muted">{t.noMembers}</p>
    </Show>
  );
  /** The search box and the list (to show while `hasMembers()`). */
  const fields = (): JSX.Element => (
    <>
      <Field label={t.find} hint={t.findHint}>
        {(a) => <input {...a} type="search" value={query()} onInput={(e) => setQuery(e.currentTarget.value)} />}
      </Field>
      <Field label={t.member}>
        {(a) => (
          <select {...a} value={chosen() ?? ''} onChange={(e) => setMember(e.currentTarget.value)} disabled={!members.latest?.length}>
            <For each={members.latest ?? []} fallback={<option value="">{t.noMatch}</option>}>
              {(m) => <option value={m.id} selected={m.id === chosen()}>{m.name ? `${m.name} <${m.email}>` : m.email}</option>}
            </For>
          </select>
        )}
      </Field>
    </>
  );
  return { chosen, hasMembers, fields, empty, error: () => members.error as unknown };
}
