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
import { createResource } from 'solid-js';
import { client, ok, type Group } from './api';
import { fetchAll, page, PAGE } from './paged';
import { ChipPicker, type PickerWords } from './chip-picker';

const t: PickerWords = {
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
  const [groups] = createResource(allGroups);
  return <ChipPicker {...props} items={groups} words={t} kind="group" />;
}
