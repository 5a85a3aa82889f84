/**
 * `gatehouse preset list | show` and `gatehouse app setup`: the app presets and an application's
 * set-up text, through the running server's admin API (spec presets-and-operations.md, "App
 * presets"; docs/integrations/README.md). `app create --preset` is in apps.ts.
 */
import { adminCommand, applicationPath } from '../admin-client.js';
import { formatFields, formatTable, printJson } from '../output.js';
import { PLACEHOLDERS } from '../../presets/build.js';

interface PresetSummary {
  id: string;
  name: string;
  protocol: string;
  summary: string;
  testedWith: { status: 'tested' | 'configuration' | 'documentation'; product: string; version: string; test: string | null };
  inputs: { key: string; label: string; example: string; required: boolean; hint?: string; default?: string }[];
}

interface PresetDetail extends PresetSummary {
  client: { tokenEndpointAuthMethod: string; pkce: boolean; scopes: string[] };
  sets: Record<string, unknown>;
  requirements: { text: string }[];
  sources: { title: string; section: string; url: string; version: string }[];
  caveats: string[];
}

/** "tested here", "settings checked here" or "documentation of version X", the words the panel uses too. */
export const statusText = (t: PresetSummary['testedWith']) =>
  t.status === 'tested'
    ? `tested here (${t.product} ${t.version})`
    : t.status === 'configuration'
      ? `settings checked here (${t.product} ${t.version} from its documentation)`
      : `checked against the documentation of ${t.product} ${t.version}`;

/** How an input is given on `app create --preset`. */
export const inputFlag = (key: string) => (key === 'baseUrl' ? '--base-url URL' : `--input ${key}=VALUE`);

export const presetList = adminCommand({
  async run({ client, json }) {
    const { presets } = await client.request<{ presets: PresetSummary[] }>('GET', '/api/admin/presets');
    if (json) return printJson({ presets });
    console.log(
      formatTable(
        ['ID', 'NAME', 'PROTOCOL', 'STATUS'],
        presets.map((p) => [p.id, p.name, p.protocol, p.testedWith.status === 'tested' ? 'tested here' : p.testedWith.status === 'configuration' ? `checked ${p.testedWith.version}` : `docs ${p.testedWith.version}`]),
      ),
    );
    console.log('\nCreate one with `gatehouse app create --preset ID --base-url URL`; `gatehouse preset show ID` lists its inputs.');
  },
});

export const presetShow = adminCommand({
  positionals: { usage: 'PRESET', min: 1, max: 1, missing: 'Give one preset id, e.g. `gatehouse preset show grafana`.' },
  async run({ client, positionals, json }) {
    const preset = await client.request<PresetDetail>('GET', `/api/admin/presets/${encodeURIComponent(positionals[0]!)}`);
    if (json) return printJson(preset);
    console.log(
      formatFields([
        ['Preset', `${preset.id} — ${preset.name}`],
        ['About', preset.summary],
        ['Status', statusText(preset.testedWith)],
        ['Inputs', preset.inputs.map((i) => `${inputFlag(i.key)}  ${i.label}${i.required ? '' : ' (optional)'}, e.g. ${i.example}`)],
        ['Scopes', preset.client.scopes.join(' ') || '(none)'],
        ['Sets', Object.entries(preset.sets).map(([field, value]) => `${field}: ${JSON.stringify(value)}`)],
        ['Test sign-in checks', preset.requirements.map((r) => r.text).concat(preset.requirements.length ? [] : ['(none)'])],
        ['Sources', preset.sources.map((s) => `${s.title}, ${s.section} (${s.version}) ${s.url}`)],
        ...(preset.caveats.length ? [['Caveats', preset.caveats] as [string, string[]]] : []),
      ]),
    );
  },
});

export interface Setup {
  settings: { label: string; value: string }[];
  files: { name: string; content: string }[];
  notes: string[];
  trust: { runtime: string; caPath: string; fingerprintSha256: string; env: Record<string, string>; settings: { file: string; name: string; value: string }[]; commands: string[] } | null;
}

export const appSetup = adminCommand({
  flags: {
    'ca-path': { type: 'string', value: 'PATH', help: "where the app's server keeps Gatehouse's CA, for the trust lines (default /etc/ssl/certs/gatehouse-ca.pem)" },
  },
  positionals: { usage: 'APP', min: 1, max: 1, missing: 'Give one application id, e.g. `gatehouse app setup grafana`.' },
  async run({ client, positionals, values, json }) {
    const caPath = values['ca-path'];
    const query = typeof caPath === 'string' ? `?caPath=${encodeURIComponent(caPath)}` : '';
    const setup = await client.request<Setup>('GET', `${applicationPath(positionals[0]!)}/setup${query}`);
    if (json) return printJson(setup);
    printSetup(setup);
  },
});

/**
 * The set-up text as `app setup` prints it. `secrets` shown now (right after `app create --preset`)
 * are written in place of their placeholders (issue 44, m1), and the note to replace them is left out.
 */
export function printSetup(setup: Setup, secrets: Partial<Record<'clientSecret' | 'ldapPassword', string | null | undefined>> = {}): void {
  const known = (['clientSecret', 'ldapPassword'] as const).flatMap((key) => (secrets[key] ? [[PLACEHOLDERS[key], secrets[key]!] as const] : []));
  const fill = (text: string) => known.reduce((out, [placeholder, value]) => out.replaceAll(placeholder, value), text);
  console.log(formatFields(setup.settings.map((s) => [s.label, fill(s.value)])));
  for (const file of setup.files) console.log(`\n--- ${file.name} ---\n${fill(file.content).replace(/\n$/, '')}`);
  const notes = setup.notes.filter((note) => !known.some(([placeholder]) => note.includes(placeholder)));
  if (notes.length) console.log(`\n${notes.map((n) => `* ${n}`).join('\n')}`);
  {
    const trust = setup.trust;
    if (trust) {
      // The same lines as the panel's: environment, settings, then the commands to run, one a line.
      console.log(`\n--- trust the local CA (${trust.runtime}; SHA-256 ${trust.fingerprintSha256}) ---`);
      for (const [name, value] of Object.entries(trust.env)) console.log(`${name}=${value}`);
      for (const setting of trust.settings) console.log(`${setting.file}: ${setting.name} = ${setting.value}`);
      for (const command of trust.commands) console.log(`$ ${command}`);
    }
  }
}
