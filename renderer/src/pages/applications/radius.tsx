/**
 * RADIUS for one application (spec radius.md, "RADIUS clients belong to applications";
 * docs/radius.md): the network gear that may ask (a name and an address or CIDR range per line),
 * each client's shared secret shown once when it is added or made again, the VLAN of each group
 * and of everyone else.
 */
import { createSignal, For, Show } from 'solid-js';
import { ApiError, client, ok, type Application } from '../../api';
import { confirmAction, CopyField, ErrorBox, Field, SaveOrTurnOff, toast, useAction, when } from '../../ui';

const t = {
  intro:
    'Let the office Wi-Fi (WPA2/WPA3-Enterprise), the VPN and switches ask Gatehouse who may connect. This application\'s active members join with a network certificate from their account page (EAP-TLS) or an app password (EAP-TTLS/PAP, PAP) — never their own password. The server must run with GATEHOUSE_RADIUS=on (UDP 1812 and 1813).',
  clients: 'RADIUS clients',
  clientsHint: 'One per line: a name, "=", then the address the gear sends from or a CIDR range, e.g. Office APs = 192.168.10.0/24. A new name gets a shared secret, shown once.',
  vlans: 'VLANs by group',
  vlansHint: 'One per line: a directory group id, "=", a VLAN (1–4094), e.g. staff = 20. The first line whose group the person is in wins.',
  defaultVlan: 'VLAN of everyone else',
  defaultVlanHint: 'Empty: the VLAN the access point puts them on.',
  save: 'Save RADIUS',
  saved: 'RADIUS settings saved.',
  off: 'Remove RADIUS',
  removed: 'This application has no RADIUS clients now.',
  secrets: 'Shared secrets — shown only now. Type each into its gear.',
  list: 'Clients and their secrets',
  secretSet: 'secret set',
  rotate: 'New secret',
  rotateTitle: 'Make a new shared secret?',
  rotateText: 'The current secret stops working at once; the gear needs the new one.',
  rotateAction: 'Make new secret',
};

const lines = (text: string) => text.split('\n').map((l) => l.trim()).filter(Boolean);
const pair = (line: string) => {
  const at = line.lastIndexOf('=');
  return at < 0 ? [line, ''] : [line.slice(0, at).trim(), line.slice(at + 1).trim()];
};

/** The server's field errors under `radius.clients` / `.vlans` (and the rest), by line. */
function radiusErrors(error: unknown): { clients: string[]; vlans: string[]; other: string[] } {
  const out = { clients: [] as string[], vlans: [] as string[], other: [] as string[] };
  if (!(error instanceof ApiError)) return out;
  for (const e of error.problem.errors ?? []) {
    const match = /^body\.radius(?:\.(clients|vlans)(?:\.(\d+))?)?/.exec(e.path);
    if (!match) continue;
    const where = match[2] !== undefined ? `Line ${Number(match[2]) + 1}: ` : '';
    (match[1] ? out[match[1] as 'clients' | 'vlans'] : out.other).push(where + e.message);
  }
  return out;
}

export function RadiusTab(props: { app: Application; onSaved: (app: Application) => void }) {
  const id = props.app.id;
  const current = () => props.app.radius;
  const [clients, setClients] = createSignal((current()?.clients ?? []).map((c) => `${c.name} = ${c.address}`).join('\n'));
  const [vlans, setVlans] = createSignal((current()?.vlans ?? []).map((v) => `${v.group} = ${v.vlan}`).join('\n'));
  const [defaultVlan, setDefaultVlan] = createSignal(current()?.defaultVlan == null ? '' : String(current()!.defaultVlan));
  const [secrets, setSecrets] = createSignal<[string, string][]>([]);
  const save = useAction();
  const rotation = useAction();
  const errors = () => radiusErrors(save.error());

  const patch = async (radius: unknown, message: string) => {
    const next = await save.run(() => ok(client.PATCH('/api/admin/applications/{id}', { params: { path: { id } }, body: { radius } as never })));
    if (!next) return;
    setSecrets(Object.entries(next.radiusSecrets ?? {}));
    props.onSaved(next);
    toast(message);
  };
  const submit = (e: Event) => {
    e.preventDefault();
    const vlan = defaultVlan().trim();
    void patch(
      {
        clients: lines(clients()).map((line) => {
          const [name, address] = pair(line);
          return { name, address };
        }),
        vlans: lines(vlans()).map((line) => {
          const [group, value] = pair(line);
          return { group, vlan: Number(value) };
        }),
        defaultVlan: vlan === '' ? null : Number(vlan),
      },
      t.saved,
    );
  };
  const rotate = async (name: string) => {
    if (!(await confirmAction(t.rotateTitle, t.rotateText, t.rotateAction))) return;
    const r = await rotation.run(() => ok(client.POST('/api/admin/applications/{id}/radius/clients/{name}/secret', { params: { path: { id, name } } })));
    if (r) setSecrets([[name, r.secret]]);
  };

  return (
    <>
      <p class="hint">{t.intro}</p>
      <form class="card" novalidate onSubmit={submit} data-testid="radius">
        <Field label={t.clients} hint={t.clientsHint} errors={errors().clients}>
          {(a) => <textarea {...a} name="radiusClients" rows={4} value={clients()} onInput={(e) => setClients(e.currentTarget.value)} />}
        </Field>
        <Field label={t.vlans} hint={t.vlansHint} errors={errors().vlans}>
          {(a) => <textarea {...a} name="radiusVlans" rows={3} value={vlans()} onInput={(e) => setVlans(e.currentTarget.value)} />}
        </Field>
        <Field label={t.defaultVlan} hint={t.defaultVlanHint} errors={errors().other}>
          {(a) => <input {...a} name="radiusDefaultVlan" inputmode="numeric" value={defaultVlan()} onInput={(e) => setDefaultVlan(e.currentTarget.value)} />}
        </Field>
        <Show when={secrets().length}>
          <div class="notice">
            {t.secrets}
            <For each={secrets()}>{([name, secret]) => <CopyField label={name} value={secret} secret />}</For>
          </div>
        </Show>
        <ErrorBox error={save.error() ?? rotation.error()} fieldsShown />
        <SaveOrTurnOff save={t.save} off={t.off} on={!!current()} busy={save.busy()} onTurnOff={() => void patch(null, t.removed)} />
      </form>
      <Show when={current()?.clients.length}>
        <h2>{t.list}</h2>
        <ul class="card plain">
          <For each={current()!.clients}>
            {(c) => (
              <li>
                <strong>{c.name}</strong> {c.address} — {t.secretSet} {when(c.secretSetAt)}{' '}
                <button type="button" onClick={() => void rotate(c.name)} disabled={rotation.busy()}>
                  {t.rotate}
                </button>
              </li>
            )}
          </For>
        </ul>
      </Show>
    </>
  );
}
