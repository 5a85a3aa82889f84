/**
 * What the application's tokens say about people (spec claims-and-groups.md; docs/claims-and-scopes.md):
 * which unknown scopes it may ask for, which of a person's groups the `groups` claim shows, its
 * custom claims (every source type), which other applications may introspect its tokens — and a
 * preview of a chosen member's ID token, userinfo and access-token claims, from the admin API
 * (`GET …/users/:uid/claims`), so an administrator sees the result before anyone signs in.
 *
 * Roles (spec administrators-and-people.md): the tab is the application's settings, so the owner
 * and the application's app managers see it. Only owners and people managers may read the
 * directory's groups; an app manager names groups by id (the server still checks they exist).
 */
import { createMemo, createResource, createSignal, For, Index, Match, Show, Switch } from 'solid-js';
import { ApiError, client, fieldErrors, ok, type Application } from '../../api';
import { GroupPicker, allGroups } from '../../group-picker';
import { managesPeople } from '../../me';
import { createMemberPicker } from '../../member-picker';
import { fetchAll, page, PAGE } from '../../paged';
import { ErrorBox, Field, toast, useAction } from '../../ui';
import { claimNameProblem } from '../../../../server/applications/claim-names';

type CustomClaim = Application['customClaims'][number];
type Source = CustomClaim['source'];
type SourceType = Source['type'];

const t = {
  intro:
    'What this application learns about the people who sign in: the claims of each scope it asks for (profile: names and username; email; groups), and the claims below, which it gets whatever it asks for.',
  unknownScopes: 'Scopes Gatehouse does not know',
  unknownOptions: [
    ['reject', 'Refuse the sign-in (invalid_scope) — the default'],
    ['ignore', 'Leave them out and grant the rest'],
  ] as [Application['unknownScopes'], string][],
  unknownHint: 'Some apps always ask for scopes of their own (roles, api.read). "Leave them out" lets them sign in; the token response says what was granted.',
  groupsFilter: 'Groups the groups claim shows',
  allGroups: "All of the person's groups",
  someGroups: 'Only these groups',
  filterPicker: 'Groups this application may see',
  filterIds: 'Group ids this application may see',
  filterHint: 'A person in a group not listed here is not told about it to this application.',
  idsHint: 'Group ids, separated by spaces or commas.',
  custom: 'Custom claims',
  customHint: 'Up to 20. Names Gatehouse sets itself (sub, email, groups, …) are refused.',
  noClaims: 'No custom claims.',
  claimName: 'Claim name',
  sourceType: 'Value from',
  types: [
    ['role', "The member's role here (member or admin)"],
    ['profileField', 'A profile field'],
    ['inGroup', 'Whether the person is in a group (true or false)'],
    ['groupMap', 'The first of these groups the person is in'],
    ['constant', 'A fixed value'],
  ] as [SourceType, string][],
  profileField: 'Profile field',
  noProfileFields: 'This application has no profile fields (Sign-in policy tab).',
  group: 'Group',
  groupId: 'Group id',
  chooseGroup: 'Choose a group',
  mapGroup: (i: number) => `Group ${i + 1}`,
  mapValue: (i: number) => `Value ${i + 1}`,
  addMapping: 'Add a group',
  removeMapping: (i: number) => `Remove group ${i + 1}`,
  defaultValue: 'Otherwise (leave empty to leave the claim out)',
  value: 'Value',
  valueHint: 'Text, or JSON: a number, true or false, a list, an object.',
  inAccessToken: 'Also in the access token',
  removeClaim: (name: string) => `Remove claim ${name || '(unnamed)'}`,
  removeClaimText: 'Remove claim',
  addClaim: 'Add a claim',
  resourceServers: 'Applications that may introspect its tokens',
  resourceHint: 'Other confidential (web) applications, such as an IMAP server behind a webmail: they ask the introspection endpoint with their own credentials and get the same answer.',
  noOthers: 'There is no other confidential application.',
  notShown: 'an application you do not manage',
  save: 'Save claims',
  saved: 'Claims saved.',
  fixFirst: 'Some claims need fixing; see the messages under them.',
  // Checks made before saving, in words (the server makes them too, in its own words).
  needName: 'A claim needs a name.',
  badName: 'A claim name starts with a letter and holds only letters, digits and _ . : / - (at most 100 characters).',
  reservedName: (name: string) => `"${name}" is a claim Gatehouse sets itself; choose another name.`,
  duplicateName: 'Another claim has this name.',
  needField: 'Choose a profile field.',
  needGroup: 'Choose a group.',
  needMapping: 'List at least one group.',
  preview: 'Preview a member’s claims',
  previewHint: 'What their tokens would say now, with the saved settings, for this scope. The protocol’s own claims (iss, aud, exp, …) are left out.',
  scope: 'Scope',
  show: 'Preview',
  granted: (scope: string) => `Granted scope: ${scope || '(none)'}`,
  idToken: 'ID token',
  userinfo: 'Userinfo',
  accessToken: 'Access token (custom claims)',
  none: '(none)',
};

/** Group ids typed into a text box. */
const words = (text: string) => text.split(/[\s,]+/).filter(Boolean);

/** A JSON value as typed: JSON when it parses as such, else the text itself. */
function parseValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
const showValue = (value: unknown) => (value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value));

/** A claim being edited: values kept as typed text. */
interface Draft {
  name: string;
  type: SourceType;
  key: string;
  group: string;
  map: { group: string; value: string }[];
  defaultText: string;
  valueText: string;
  inAccessToken: boolean;
}

function draftOf(claim: CustomClaim): Draft {
  const s = claim.source as Source & { key?: string; group?: string; map?: { group: string; value: unknown }[]; default?: unknown; value?: unknown };
  return {
    name: claim.name, type: s.type, key: s.key ?? '', group: s.group ?? '',
    map: (s.map ?? []).map((m) => ({ group: m.group, value: showValue(m.value) })),
    defaultText: showValue(s.default), valueText: showValue(s.value), inAccessToken: Boolean(claim.inAccessToken),
  };
}

function claimOf(d: Draft): CustomClaim {
  const source: Record<string, unknown> = { type: d.type };
  if (d.type === 'profileField') source.key = d.key;
  if (d.type === 'inGroup') source.group = d.group.trim();
  if (d.type === 'groupMap') {
    source.map = d.map.map((m) => ({ group: m.group.trim(), value: parseValue(m.value) }));
    if (d.defaultText.trim()) source.default = parseValue(d.defaultText);
  }
  if (d.type === 'constant') source.value = parseValue(d.valueText);
  return { name: d.name.trim(), source: source as Source, ...(d.inAccessToken ? { inAccessToken: true } : {}) };
}

const emptyDraft = (): Draft => ({ name: '', type: 'role', key: '', group: '', map: [{ group: '', value: '' }], defaultText: '', valueText: '', inAccessToken: false });

/**
 * A claim card's messages by the field they belong to: `name`, `key`, `group`, `map.<j>.group`,
 * `map.<j>.value`, `default`, `value`; anything else under `other`.
 */
type ClaimErrors = Record<string, string[]>;

/** What the panel checks before saving: what can be said better here than by the schema. */
function draftErrors(drafts: readonly Draft[]): ClaimErrors[] {
  const names = drafts.map((d) => d.name.trim());
  return drafts.map((d, i) => {
    const out: ClaimErrors = {};
    const add = (field: string, message: string) => (out[field] ??= []).push(message);
    const name = names[i]!;
    if (!name) add('name', t.needName);
    else if (claimNameProblem(name) === 'pattern') add('name', t.badName);
    else if (claimNameProblem(name) === 'reserved') add('name', t.reservedName(name));
    else if (names.indexOf(name) !== i) add('name', t.duplicateName);
    if (d.type === 'profileField' && !d.key) add('key', t.needField);
    if (d.type === 'inGroup' && !d.group.trim()) add('group', t.needGroup);
    if (d.type === 'groupMap') {
      if (!d.map.length) add('other', t.needMapping);
      d.map.forEach((m, j) => m.group.trim() || add(`map.${j}.group`, t.needGroup));
    }
    return out;
  });
}

/** Words for the field a server message is about, when the message starts with a verb ("is required …"). */
const FIELD_LABEL: Record<string, string> = { name: 'The claim name', key: 'The profile field', group: 'The group', value: 'The value', default: 'The "otherwise" value', map: 'The list of groups' };

/** One server message as a sentence under its field: `is required for a inGroup source` → "The group is required for a inGroup source." */
function inWords(field: string, message: string): string {
  const label = FIELD_LABEL[field.startsWith('map.') ? field.split('.')[2]! : field];
  const text = label && /^(is|must|should|has)\b/.test(message) ? `${label} ${message}` : message;
  return text[0]!.toUpperCase() + text.slice(1) + (/[.!?]$/.test(text) ? '' : '.');
}

/** The server's errors under `body.customClaims.<i>…`, by claim and field; those about the whole list apart. */
function serverClaimErrors(error: unknown): { byClaim: ClaimErrors[]; list: string[] } {
  const byClaim: ClaimErrors[] = [];
  const list: string[] = [];
  if (!(error instanceof ApiError)) return { byClaim, list };
  for (const e of error.problem.errors ?? []) {
    const match = /^body\.customClaims(?:\.(\d+)(?:\.(.*))?)?$/.exec(e.path);
    if (!match) continue;
    if (match[1] === undefined) {
      list.push(inWords('', e.message));
      continue;
    }
    const rest = (match[2] ?? '').replace(/^source\./, '');
    const field = /^(name|key|group|value|default|map\.\d+\.(group|value))$/.test(rest) ? rest : 'other';
    ((byClaim[Number(match[1])] ??= {})[field] ??= []).push(inWords(field === 'other' ? rest.split('.')[0] ?? '' : field, e.message));
  }
  return { byClaim, list };
}

export function ClaimsTab(props: { app: Application; onSaved: (app: Application) => void }) {
  const [unknownScopes, setUnknownScopes] = createSignal(props.app.unknownScopes);
  const [filtered, setFiltered] = createSignal(props.app.groupsFilter !== null);
  const [filter, setFilter] = createSignal<string[]>(props.app.groupsFilter ?? []);
  const [filterText, setFilterText] = createSignal((props.app.groupsFilter ?? []).join(' '));
  const [drafts, setDrafts] = createSignal<Draft[]>(props.app.customClaims.map(draftOf));
  const [servers, setServers] = createSignal<string[]>(props.app.resourceServers);
  const [checked, setChecked] = createSignal(false);
  // The directory's groups are the people managers' (and owners'): an app manager types ids.
  const listsGroups = managesPeople;
  const [groups] = createResource(() => listsGroups() || undefined, allGroups);
  // An app manager lists only the applications they manage (GET /applications filters them).
  const [others] = createResource(() =>
    fetchAll((cursor) => ok(client.GET('/api/admin/applications', { params: { query: { limit: PAGE, cursor } } })).then((d) => page(d.applications, d))).then(
      (apps) => apps.filter((a) => a.id !== props.app.id && a.clientType === 'web'),
    ),
  );
  /** Resource servers already listed that the caller cannot see: kept, and shown by id. */
  const unseenServers = () => (others.latest ? servers().filter((id) => !others.latest!.some((o) => o.id === id)) : []);
  const save = useAction();
  const errors = () => fieldErrors(save.error());
  const local = createMemo(() => draftErrors(drafts()));
  const server = () => serverClaimErrors(save.error());
  /** Whether the last attempt to save found claims to fix here (until they are fixed). */
  const blocked = () => checked() && local().some((errs) => Object.keys(errs).length > 0);
  const claimErrors = (i: number, field: string) => [...(checked() ? local()[i]?.[field] ?? [] : []), ...(server().byClaim[i]?.[field] ?? [])];
  const update = (i: number, change: Partial<Draft>) => setDrafts(drafts().map((d, j) => (j === i ? { ...d, ...change } : d)));
  /** Adding or removing claims or groups renumbers them: the server's messages by number no longer apply. */
  const reshape = (next: Draft[]) => {
    save.setError(null);
    setDrafts(next);
  };
  const reshapeMap = (i: number, map: Draft['map']) => reshape(drafts().map((d, j) => (j === i ? { ...d, map } : d)));

  const submit = async (e: Event) => {
    e.preventDefault();
    setChecked(true);
    if (blocked()) {
      save.setError(null);
      return;
    }
    const body = {
      unknownScopes: unknownScopes(),
      groupsFilter: filtered() ? (listsGroups() ? filter() : words(filterText())) : null,
      customClaims: drafts().map(claimOf),
      resourceServers: servers(),
    };
    const next = await save.run(() => ok(client.PATCH('/api/admin/applications/{id}', { params: { path: { id: props.app.id } }, body })));
    if (next) {
      setChecked(false);
      props.onSaved(next);
      toast(t.saved);
    }
  };

  /** A group chooser (a text box of the id for an app manager); `value` is read reactively (the options arrive after the first render). */
  const groupInput = (label: string, fieldErrors: () => string[], value: () => string, onChange: (v: string) => void) => (
    <Show
      when={listsGroups()}
      fallback={
        <Field label={`${label} (${t.groupId})`} errors={fieldErrors()}>
          {(a) => <input {...a} value={value()} placeholder="grafana-admins" onInput={(e) => onChange(e.currentTarget.value)} />}
        </Field>
      }
    >
      <Field label={label} errors={fieldErrors()}>
        {(a) => (
          <select {...a} value={value()} onChange={(e) => onChange(e.currentTarget.value)}>
            <option value="">{t.chooseGroup}</option>
            <For each={groups.latest ?? []}>{(g) => <option value={g.id} selected={g.id === value()}>{g.name} ({g.id})</option>}</For>
            {/* A group deleted since it was chosen still shows, so it can be changed. */}
            <Show when={value() && groups.latest && !groups.latest.some((g) => g.id === value())}>
              <option value={value()} selected>{value()}</option>
            </Show>
          </select>
        )}
      </Field>
    </Show>
  );

  return (
    <>
      <form class="card claims-form" novalidate onSubmit={submit} data-testid="claims">
        <p>{t.intro}</p>
        <Field label={t.unknownScopes} hint={t.unknownHint} errors={errors().unknownScopes}>
          {(a) => (
            <select {...a} name="unknownScopes" value={unknownScopes()} onChange={(e) => setUnknownScopes(e.currentTarget.value as Application['unknownScopes'])}>
              <For each={t.unknownOptions}>{([value, label]) => <option value={value}>{label}</option>}</For>
            </select>
          )}
        </Field>

        <fieldset class="grants">
          <legend>{t.groupsFilter}</legend>
          <label class="check">
            <input type="radio" name="groupsFilter" checked={!filtered()} onChange={() => setFiltered(false)} /> {t.allGroups}
          </label>
          <label class="check">
            <input type="radio" name="groupsFilter" checked={filtered()} onChange={() => setFiltered(true)} /> {t.someGroups}
          </label>
          <Show when={filtered()}>
            <Show
              when={listsGroups()}
              fallback={
                <Field label={t.filterIds} hint={`${t.filterHint} ${t.idsHint}`}>
                  {(a) => <input {...a} name="groupsFilterIds" value={filterText()} placeholder="family media-users" onInput={(e) => setFilterText(e.currentTarget.value)} />}
                </Field>
              }
            >
              <GroupPicker label={t.filterPicker} hint={t.filterHint} value={filter()} onChange={setFilter} hrefOf={(id) => `/groups/${encodeURIComponent(id)}`} />
            </Show>
          </Show>
          <div class="field-errors" aria-live="polite">
            <For each={errors().groupsFilter ?? []}>{(m) => <p>{m}</p>}</For>
          </div>
        </fieldset>

        <fieldset class="grants claims-editor">
          <legend>{t.custom}</legend>
          <p class="hint">{t.customHint}</p>
          <Show when={drafts().length} fallback={<p class="muted">{t.noClaims}</p>}>
            <Index each={drafts()}>
              {(d, i) => (
                <div class="card claim" data-claim={i}>
                  <div class="row">
                    <Field label={t.claimName} errors={claimErrors(i, 'name')}>
                      {(a) => <input {...a} value={d().name} placeholder="grafana_role" maxLength={100} onInput={(e) => update(i, { name: e.currentTarget.value })} />}
                    </Field>
                    <Field label={t.sourceType}>
                      {(a) => (
                        <select {...a} value={d().type} onChange={(e) => update(i, { type: e.currentTarget.value as SourceType })}>
                          <For each={t.types}>{([value, label]) => <option value={value} selected={value === d().type}>{label}</option>}</For>
                        </select>
                      )}
                    </Field>
                  </div>
                  <Switch>
                    <Match when={d().type === 'profileField'}>
                      <Show when={props.app.authPolicy.profile_fields.length} fallback={<p class="muted">{t.noProfileFields}</p>}>
                        <Field label={t.profileField} errors={claimErrors(i, 'key')}>
                          {(a) => (
                            <select {...a} value={d().key} onChange={(e) => update(i, { key: e.currentTarget.value })}>
                              <option value="" />
                              <For each={props.app.authPolicy.profile_fields}>{(f) => <option value={f.key} selected={f.key === d().key}>{f.label} ({f.key})</option>}</For>
                            </select>
                          )}
                        </Field>
                      </Show>
                    </Match>
                    <Match when={d().type === 'inGroup'}>{groupInput(t.group, () => claimErrors(i, 'group'), () => d().group, (group) => update(i, { group }))}</Match>
                    <Match when={d().type === 'groupMap'}>
                      <Index each={d().map}>
                        {(m, j) => (
                          <div class="row">
                            {groupInput(t.mapGroup(j), () => claimErrors(i, `map.${j}.group`), () => m().group, (group) => update(i, { map: d().map.map((x, k) => (k === j ? { ...x, group } : x)) }))}
                            <Field label={t.mapValue(j)} errors={claimErrors(i, `map.${j}.value`)}>
                              {(a) => <input {...a} value={m().value} placeholder="Admin" onInput={(e) => update(i, { map: d().map.map((x, k) => (k === j ? { ...x, value: e.currentTarget.value } : x)) })} />}
                            </Field>
                            <button type="button" class="small" aria-label={t.removeMapping(j)} onClick={() => reshapeMap(i, d().map.filter((_, k) => k !== j))}>
                              ×
                            </button>
                          </div>
                        )}
                      </Index>
                      <button type="button" class="small" disabled={d().map.length >= 100} onClick={() => reshapeMap(i, [...d().map, { group: '', value: '' }])}>
                        {t.addMapping}
                      </button>
                      <Field label={t.defaultValue} hint={t.valueHint} errors={claimErrors(i, 'default')}>
                        {(a) => <input {...a} value={d().defaultText} placeholder="Viewer" onInput={(e) => update(i, { defaultText: e.currentTarget.value })} />}
                      </Field>
                    </Match>
                    <Match when={d().type === 'constant'}>
                      <Field label={t.value} hint={t.valueHint} errors={claimErrors(i, 'value')}>
                        {(a) => <input {...a} value={d().valueText} onInput={(e) => update(i, { valueText: e.currentTarget.value })} />}
                      </Field>
                    </Match>
                  </Switch>
                  <div class="field-errors" aria-live="polite">
                    <For each={claimErrors(i, 'other')}>{(m) => <p>{m}</p>}</For>
                  </div>
                  <div class="row">
                    <label class="check">
                      <input type="checkbox" checked={d().inAccessToken} onChange={(e) => update(i, { inAccessToken: e.currentTarget.checked })} /> {t.inAccessToken}
                    </label>
                    <button type="button" class="small" aria-label={t.removeClaim(d().name)} onClick={() => reshape(drafts().filter((_, j) => j !== i))}>
                      {t.removeClaimText}
                    </button>
                  </div>
                </div>
              )}
            </Index>
          </Show>
          <div class="field-errors" aria-live="polite">
            <For each={server().list}>{(m) => <p>{m}</p>}</For>
          </div>
          <button type="button" class="small" disabled={drafts().length >= 20} onClick={() => reshape([...drafts(), emptyDraft()])}>
            {t.addClaim}
          </button>
        </fieldset>

        <fieldset class="grants">
          <legend>{t.resourceServers}</legend>
          <p class="hint">{t.resourceHint}</p>
          <Show when={(others.latest ?? []).length || unseenServers().length} fallback={<p class="muted">{t.noOthers}</p>}>
            <For each={others.latest ?? []}>
              {(o) => (
                <label class="check">
                  <input
                    type="checkbox"
                    name="resourceServers"
                    value={o.id}
                    checked={servers().includes(o.id)}
                    onChange={(e) => setServers(e.currentTarget.checked ? [...servers(), o.id] : servers().filter((s) => s !== o.id))}
                  />{' '}
                  {o.name} <code>{o.id}</code>
                </label>
              )}
            </For>
            <For each={unseenServers()}>
              {(id) => (
                <label class="check">
                  <input type="checkbox" name="resourceServers" value={id} checked onChange={() => setServers(servers().filter((s) => s !== id))} /> <code>{id}</code>{' '}
                  <span class="muted">({t.notShown})</span>
                </label>
              )}
            </For>
          </Show>
          <div class="field-errors" aria-live="polite">
            <For each={errors().resourceServers ?? []}>{(m) => <p>{m}</p>}</For>
          </div>
        </fieldset>

        <ErrorBox error={save.error()} fieldsShown />
        <Show when={blocked()}>
          <div class="error" role="alert">
            {t.fixFirst}
          </div>
        </Show>
        <div class="actions">
          <button class="primary" type="submit" disabled={save.busy()}>
            {t.save}
          </button>
        </div>
      </form>
      <ClaimsPreview app={props.app} />
    </>
  );
}

/** The preview: a member (searched by name or address) and a scope; the three sets of claims as JSON. */
function ClaimsPreview(props: { app: Application }) {
  const picker = createMemberPicker(() => props.app.id);
  const [scope, setScope] = createSignal('openid profile email groups');
  const [shown, setShown] = createSignal<{ scope: string; idToken: unknown; userinfo: unknown; accessToken: unknown } | undefined>();
  const load = useAction();
  const chosen = picker.chosen;
  const submit = async (e: Event) => {
    e.preventDefault();
    const uid = chosen();
    if (!uid) return;
    const preview = await load.run(() =>
      ok(client.GET('/api/admin/applications/{id}/users/{uid}/claims', { params: { path: { id: props.app.id, uid }, query: { scope: scope() } } })),
    );
    if (preview) setShown(preview);
  };
  return (
    <form class="card claims-form" novalidate onSubmit={submit} data-testid="claims-preview">
      <h2>{t.preview}</h2>
      <p class="hint">{t.previewHint}</p>
      <Show when={picker.hasMembers()}>
        <div class="row">
          {picker.fields()}
          <Field label={t.scope} errors={fieldErrors(load.error()).scope}>
            {(a) => <input {...a} value={scope()} onInput={(e) => setScope(e.currentTarget.value)} />}
          </Field>
          <button type="submit" disabled={load.busy() || !chosen()}>
            {t.show}
          </button>
        </div>
      </Show>
      {picker.empty()}
      <ErrorBox error={load.error() ?? picker.error()} fieldsShown />
      <Show when={shown()}>
        {(p) => (
          <>
            <p class="hint" data-preview-scope>{t.granted(p().scope)}</p>
            <div class="grid claims-preview">
              <For each={[[t.idToken, p().idToken], [t.userinfo, p().userinfo], [t.accessToken, p().accessToken]] as [string, unknown][]}>
                {([label, claims]) => (
                  <section>
                    <h3>{label}</h3>
                    {/* Focusable: a long block scrolls, and a keyboard must reach it. */}
                    <pre data-preview={label} tabindex="0" aria-label={label}>{Object.keys(claims as object).length ? JSON.stringify(claims, null, 2) : t.none}</pre>
                  </section>
                )}
              </For>
            </div>
          </>
        )}
      </Show>
    </form>
  );
}
