/**
 * Choosing directory groups wherever something names them (a person's groups, an invitation's,
 * and the claims settings that name groups): the chosen ones as chips, each with its own remove
 * button, and a search box over every group (name or id) whose suggestions add on a click or
 * Enter. Groups are at most 1,000, so the picker reads them all once (`allGroups`).
 *
 *   <GroupPicker label="Groups" value={ids()} onChange={setIds} />
 *
 * A chosen id that is no longer a group (deleted meanwhile) shows as such, so it can be removed.
 */
import { createMemo, createResource, createSignal, createUniqueId, For, Show } from 'solid-js';
import { A } from '@solidjs/router';
import { client, ok, type Group } from './api';
import { fetchAll, page, PAGE } from './paged';
import { ErrorBox } from './ui';

const t = {
  search: 'Find a group',
  placeholder: 'Type a name or id',
  add: 'Add',
  remove: (name: string) => `Remove ${name}`,
  none: 'None chosen.',
  deleted: 'no longer a group',
  noMatch: (q: string) => `No group matches “${q}”.`,
  suggestions: 'Matching groups',
};

/** Every directory group, by creation (at most 1,000: five pages). */
export function allGroups(): Promise<Group[]> {
  return fetchAll((cursor) => ok(client.GET('/api/admin/groups', { params: { query: { limit: PAGE, cursor } } })).then((d) => page(d.groups, d)));
}

export function GroupPicker(props: {
  label: string;
  value: readonly string[];
  onChange: (ids: string[]) => void;
  hint?: string;
  disabled?: boolean;
  /** How many suggestions show at once. */
  limit?: number;
  /** Where a chosen group's name links to (its page in the panel), if anywhere. */
  hrefOf?: (groupId: string) => string;
}) {
  const id = createUniqueId();
  const [groups] = createResource(allGroups);
  const [query, setQuery] = createSignal('');
  const byId = createMemo(() => new Map((groups.latest ?? []).map((g) => [g.id, g])));
  const suggestions = createMemo(() => {
    const q = query().trim().toLowerCase();
    if (!q) return [];
    const chosen = new Set(props.value);
    return (groups.latest ?? [])
      .filter((g) => !chosen.has(g.id) && (g.id.includes(q) || g.name.toLowerCase().includes(q)))
      .slice(0, props.limit ?? 8);
  });
  const add = (groupId: string) => {
    if (!props.value.includes(groupId)) props.onChange([...props.value, groupId]);
    setQuery('');
  };
  const remove = (groupId: string) => props.onChange(props.value.filter((g) => g !== groupId));

  return (
    <fieldset class="group-picker" disabled={props.disabled}>
      <legend>{props.label}</legend>
      <Show when={props.hint}>
        <p class="hint">{props.hint}</p>
      </Show>
      <Show when={props.value.length} fallback={<p class="muted">{t.none}</p>}>
        <ul class="chips" aria-label={props.label}>
          <For each={[...props.value]}>
            {(groupId) => {
              const group = () => byId().get(groupId);
              return (
                <li class="chip" data-group={groupId}>
                  <Show when={props.hrefOf && group()} fallback={<span>{group()?.name ?? groupId}</span>}>
                    <A href={props.hrefOf!(groupId)}>{group()!.name}</A>
                  </Show>{' '}
                  <code>{groupId}</code>
                  <Show when={groups.latest && !group()}>
                    {' '}
                    <span class="badge bad">{t.deleted}</span>
                  </Show>
                  <button type="button" class="small" aria-label={t.remove(group()?.name ?? groupId)} onClick={() => remove(groupId)}>
                    ×
                  </button>
                </li>
              );
            }}
          </For>
        </ul>
      </Show>
      <label for={id}>{t.search}</label>
      <input
        id={id}
        type="search"
        autocomplete="off"
        placeholder={t.placeholder}
        value={query()}
        aria-controls={`${id}-suggestions`}
        onInput={(e) => setQuery(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key !== 'Enter') return;
          // Enter picks the first suggestion instead of submitting the form around the picker.
          e.preventDefault();
          const first = suggestions()[0];
          if (first) add(first.id);
        }}
      />
      <ErrorBox error={groups.error} />
      <ul class="suggestions" id={`${id}-suggestions`} aria-label={t.suggestions} aria-live="polite">
        <For each={suggestions()}>
          {(g) => (
            <li>
              <button type="button" class="small" onClick={() => add(g.id)}>
                {t.add} {g.name} <code>{g.id}</code>
              </button>
            </li>
          )}
        </For>
        <Show when={query().trim() && groups.latest && suggestions().length === 0}>
          <li class="muted">{t.noMatch(query().trim())}</li>
        </Show>
      </ul>
    </fieldset>
  );
}
