/**
 * Creating an application from a preset (spec presets-and-operations.md: `POST
 * /api/admin/applications { preset, presetInputs, id?, name? }`): the preset and its checked
 * inputs become an ordinary application body, which the applications service validates and
 * stores like any other, with the preset's id, version, inputs and the settings it applied
 * recorded beside it. Presets apply at creation only; later versions are offered (upgrade.ts).
 */
import type { AppContext } from '../context.js';
import type { AppliedPreset } from '../db/schema.js';
import { validationFailed } from '../http/problem.js';
import type { ApplicationCreate } from '../applications/schemas.js';
import { findPreset } from './catalogue/index.js';
import { checkPresetInputs } from './inputs.js';
import type { Preset, PresetApplication, PresetInputs } from './types.js';

export interface PresetCreate {
  preset: string;
  presetInputs: Record<string, unknown>;
  id?: string | undefined;
  name?: string | undefined;
}

/**
 * The name an application made from `preset` gets unless one is given: what people see on the
 * sign-in page, their account page and in e-mails — the app ("Jellyfin"), never how it is
 * connected ("Jellyfin (LDAP plugin)"), which is the administrators' word.
 */
export function appNameOf(preset: Pick<Preset, 'name'>): string {
  return preset.name.replace(/\s*\([^)]*\)$/, '');
}

/** The preset with this id, or 400 `validation_failed` naming `body.preset`. */
export function presetOrUnknown(id: string): Preset {
  const preset = findPreset(id);
  if (!preset) throw validationFailed([{ path: 'body.preset', message: `there is no preset "${id}" (GET /api/admin/presets lists them)` }]);
  return preset;
}

/**
 * The application fields a preset's settings become. The one place that says which preset
 * settings the applications API takes; `applied` records exactly these, so upgrades compare like
 * with like.
 */
export function applicationFields(settings: PresetApplication) {
  return {
    clientType: settings.clientType,
    redirectUris: settings.redirectUris,
    postLogoutRedirectUris: settings.postLogoutRedirectUris,
    // The wire schema's unions of literals (made with .map) type as never here; the values are the schema's own.
    grantTypes: settings.grantTypes as unknown as NonNullable<ApplicationCreate['grantTypes']>,
    backchannelLogoutUri: settings.backchannelLogoutUri,
    ldap: settings.ldap,
    signingAlg: settings.signingAlg as unknown as NonNullable<ApplicationCreate['signingAlg']>,
    unknownScopes: settings.unknownScopes,
    groupsFilter: settings.groupsFilter,
    customClaims: settings.customClaims as unknown as NonNullable<ApplicationCreate['customClaims']>,
    resourceServers: settings.resourceServers,
    forwardAuth: settings.forwardAuth,
    allowedGroups: settings.allowedGroups,
    radius: settings.radius,
    saml: settings.saml as NonNullable<ApplicationCreate['saml']> | null,
  } satisfies Partial<ApplicationCreate>;
}

export type PresetFields = ReturnType<typeof applicationFields>;

/** The application a preset makes with these inputs: its fields and what to record of the preset. */
export async function applicationFromPreset(ctx: AppContext, body: PresetCreate): Promise<{ create: ApplicationCreate; origin: AppliedPreset }> {
  const preset = presetOrUnknown(body.preset);
  const { inputs, errors } = await checkPresetInputs(ctx.db, preset, body.presetInputs);
  if (errors.length) throw validationFailed(errors, `The inputs of the ${preset.name} preset are not valid.`);
  const id = body.id ?? preset.id;
  const fields = applicationFields(preset.application(inputs));
  return {
    create: { id, name: body.name ?? appNameOf(preset), audience: presetAudience(id), ...fields },
    origin: { id: preset.id, version: preset.version, inputs: { ...inputs } as Record<string, string>, applied: { ...fields } },
  };
}

/**
 * The audience of an application made from a preset: unique as its id is, so two apps at one
 * address never clash (the apps presets serve check their ID tokens, not access tokens' `aud`).
 */
export const presetAudience = (id: string) => `urn:gatehouse:${id}`;

/** The settings the current version of the preset gives for an application's recorded inputs. */
export function currentPresetFields(preset: Preset, inputs: PresetInputs): PresetFields {
  return applicationFields(preset.application(inputs));
}
