/**
 * Choosing several named things (directory groups, applications) wherever something names them:
 * the chosen ones as chips, each with its own remove button, and a search box over every one
 * (name or id) whose suggestions add on a click or Enter. The lists are small (at most a few
 * thousand), so a picker reads them all once.
 *
 * A chosen id that is no longer there (deleted meanwhile) shows as such, so it can be removed.
 */
import { createMemo, createSignal, createUniqueId, For, Show, type Resource } from 'solid-js';
import { A } from '@solidjs/router';
import { ErrorBox } from './ui';

export interface PickerWords {
  search: string;
  placeholder: string;
  none: string;
  deleted: string;
  noMatch: (q: string) => string;
  suggestions: string;
  add: string;
  remove: (name: string) => string;
}

export function ChipPicker(props: {
  label: string;
  value: readonly string[];
  onChange: (ids: string[]) => void;
  /** Everything there is to choose from. */
  items: Resource<readonly { id: string; name: string }[]>;
  words: PickerWords;
  /** Each chip's `data-<kind>` attribute (its id), for tests and styles. */
  kind: string;
  hint?: string;
  disabled?: boolean;
  /** How many suggestions show at once. */
  limit?: number;
  /** Where a chosen one's name links to (its page in the panel), if anywhere. */
  hrefOf?: (id: string) => string;
}) {
  const id = createUniqueId();
  const t = props.words;
  const items = props.items;
  const [query, setQuery] = createSignal('');
  const byId = createMemo(() => new Map((items.latest ?? []).map((g) => [g.id, g])));
  const suggestions = createMemo(() => {
    const q = query().trim().toLowerCase();
    if (!q) return [];
    const chosen = new Set(props.value);
    return (items.latest ?? [])
      .filter((g) => !chosen.has(g.id) && (g.id.includes(q) || g.name.toLowerCase().includes(q)))
      .slice(0, props.limit ?? 8);
  });

  const add = (chosenId: string) => {
    if (!props.value.includes(chosenId)) props.onChange([...props.value, chosenId]);
    setQuery('');
  };
  const remove = (chosenId: string) => props.onChange(props.value.filter((g) => g !== chosenId));

  return (
    <fieldset class="chip-picker" disabled={props.disabled}>
      <legend>{props.label}</legend>
      <Show when={props.hint}>
        <p class="hint">{props.hint}</p>
      </Show>
      <Show when={props.value.length} fallback={<p class="muted">{t.none}</p>}>
        <ul class="chips" aria-label={props.label}>
          <For each={[...props.value]}>
            {(chosenId) => {
              const item = () => byId().get(chosenId);
              return (
                <li class="chip" {...{ [`data-${props.kind}`]: chosenId }}>
                  <Show when={props.hrefOf && item()} fallback={<span>{item()?.name ?? chosenId}</span>}>
                    <A href={props.hrefOf!(chosenId)}>{item()!.name}</A>
                  </Show>{' '}
                  <code>{chosenId}</code>
                  <Show when={items.latest && !item()}>
                    {' '}
                    <span class="badge bad">{t.deleted}</span>
                  </Show>
                  <button type="button" class="small" aria-label={t.remove(item()?.name ?? chosenId)} onClick={() => remove(chosenId)}>
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
      <ErrorBox error={items.error} />
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
        <Show when={query().trim() && items.latest && suggestions().length === 0}>
          <li class="muted">{t.noMatch(query().trim())}</li>
        </Show>
      </ul>
    </fieldset>
  );
}
