/** Wire schemas of the presets API (spec presets-and-operations.md, "App presets"). */
import { DEFAULT_CA_PATH, SetupTrustSchema } from '../http/lan-trust-wire.js';
import { Type, type Static } from 'typebox';
import { DisplayName, Slug } from '../http/schemas.js';

const Protocol = Type.Union([Type.Literal('oidc'), Type.Literal('forward-auth'), Type.Literal('ldap'), Type.Literal('radius'), Type.Literal('saml')]);
const Category = Type.Union(['web-app', 'library', 'forward-auth', 'ldap', 'mail', 'network', 'saml'].map((c) => Type.Literal(c)));

const TestedWith = Type.Object(
  {
    status: Type.Union([Type.Literal('tested'), Type.Literal('configuration'), Type.Literal('documentation')], {
      description: '`tested`: Gatehouse\'s own tests run the app (or its relying-party library) against this preset; `configuration`: the app does not run here, but a test creates the application from the preset and checks its settings and Test sign-in checks against a real Gatehouse; `documentation`: checked against the app\'s documentation of `version` only',
    }),
    product: Type.String(),
    version: Type.String(),
    test: Type.Union([Type.String(), Type.Null()], { description: 'The test file that proves it, when tested or checked by configuration' }),
  },
  { additionalProperties: false },
);

const Input = Type.Object(
  {
    key: Type.String(),
    label: Type.String(),
    example: Type.String(),
    required: Type.Boolean(),
    kind: Type.Union(['url', 'group', 'application', 'text'].map((k) => Type.Literal(k)), { description: '`url`: an http(s) address; `group`: a directory group id; `application`: a confidential application\'s id; `text`: a short value' }),
    default: Type.Optional(Type.String()),
    hint: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const summaryProperties = {
  id: Type.String(),
  name: Type.String({ description: 'What administrators pick it by: the app, and how it connects when it has several ways' }),
  appName: Type.String({ description: 'The name an application made from it gets unless one is given: what people see (the app alone)' }),
  category: Category,
  protocol: Protocol,
  summary: Type.String(),
  version: Type.Integer({ description: 'The preset\'s revision: applications record the one they came from' }),
  testedWith: TestedWith,
  inputs: Type.Array(Input),
};

export const PresetSummarySchema = Type.Object(summaryProperties, { additionalProperties: false });
export const PresetListSchema = Type.Object({ presets: Type.Array(PresetSummarySchema) }, { additionalProperties: false });

const Source = Type.Object({ title: Type.String(), section: Type.String(), url: Type.String(), version: Type.String() }, { additionalProperties: false });
const RequirementText = Type.Object(
  { kind: Type.String(), claim: Type.Optional(Type.String()), text: Type.String() },
  { additionalProperties: false },
);

export const PresetDetailSchema = Type.Object(
  {
    ...summaryProperties,
    client: Type.Object(
      {
        tokenEndpointAuthMethod: Type.String(),
        pkce: Type.Boolean(),
        scopes: Type.Array(Type.String(), { description: 'The scopes the app asks for; Test sign-in asks for the same' }),
      },
      { additionalProperties: false, description: 'How the app itself is configured to talk to Gatehouse' },
    ),
    sets: Type.Record(Type.String(), Type.Unknown(), {
      description: 'The application settings the preset fills, with each input shown as {key} (e.g. {baseUrl}/login/generic_oauth)',
    }),
    requirements: Type.Array(RequirementText, { description: 'What Test sign-in checks after the sign-in' }),
    sources: Type.Array(Source, { description: 'The app\'s own documentation the preset was written from' }),
    caveats: Type.Array(Type.String(), { description: 'Where the app\'s documentation and what it does (or what Gatehouse does) disagree' }),
  },
  { additionalProperties: false },
);

/** `POST /api/admin/applications` from a preset. */
export const PresetCreateSchema = Type.Object(
  {
    preset: Type.String({ minLength: 1, maxLength: 100, description: 'A preset id from GET /api/admin/presets' }),
    presetInputs: Type.Record(Type.String({ maxLength: 100 }), Type.Unknown(), {
      maxProperties: 20,
      description: 'The preset\'s inputs by key (baseUrl and any others it lists)',
    }),
    id: Type.Optional(Slug),
    name: Type.Optional(DisplayName({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false, description: 'Create the application from an app preset: its settings come from the preset and its inputs' },
);
export type PresetCreateBody = Static<typeof PresetCreateSchema>;

export const SetupQuery = Type.Object(
  { caPath: Type.Optional(Type.String({ maxLength: 1024, description: `where the app's machine keeps the CA: an absolute path of [A-Za-z0-9._/-] (default ${DEFAULT_CA_PATH})` })) },
  { additionalProperties: false },
);

export const SetupSchema = Type.Object(
  {
    settings: Type.Array(Type.Object({ label: Type.String(), value: Type.String() }, { additionalProperties: false }), { description: 'What to type into the app' }),
    files: Type.Array(Type.Object({ name: Type.String(), content: Type.String() }, { additionalProperties: false }), { description: 'A configuration file or environment block' }),
    notes: Type.Array(Type.String(), { description: 'What else to do; with LAN TLS on, how the app trusts the appliance\'s CA' }),
    trust: Type.Union([SetupTrustSchema, Type.Null()], { description: 'how the app\'s server trusts the local CA, by its runtime (spec lan-trust.md); null without a local CA' }),
  },
  { additionalProperties: false, description: 'Secrets appear only as placeholders such as <client-secret>' },
);

const Difference = Type.Object(
  {
    field: Type.String(),
    applied: Type.Unknown({ description: 'What the preset set when the application was made (or last upgraded)' }),
    offered: Type.Unknown({ description: 'What the preset\'s current version sets' }),
    current: Type.Unknown({ description: 'What the application has now' }),
    changedHere: Type.Boolean({ description: 'An administrator changed it since: taking the offer leaves it unless named in fields' }),
  },
  { additionalProperties: false },
);

export const PresetStatusSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    version: Type.Integer({ description: 'The preset version the application\'s settings come from' }),
    latestVersion: Type.Integer(),
    inputs: Type.Record(Type.String(), Type.String()),
    differences: Type.Array(Difference, { description: 'Settings the current preset version sets differently' }),
  },
  { additionalProperties: false },
);

export const PresetUpgradeBodySchema = Type.Object(
  {
    fields: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), {
      maxItems: 20, uniqueItems: true,
      description: 'Also take these offered settings although an administrator changed them (default: only the unchanged ones)',
    })),
  },
  { additionalProperties: false },
);

export const PresetUpgradeSchema = Type.Object(
  {
    taken: Type.Array(Type.String(), { description: 'Settings now set to the preset\'s current value' }),
    kept: Type.Array(Type.String(), { description: 'Offered settings left as the administrator set them' }),
    preset: PresetStatusSchema,
  },
  { additionalProperties: false },
);
