/**
 * Later preset versions are offered, never forced (spec presets-and-operations.md: "A preset never
 * overwrites settings the administrator changed afterwards when Gatehouse is upgraded"). For each
 * setting a preset fills there are three values: what the preset applied at creation (recorded
 * with the application), what the preset's current version gives for the same inputs, and what
 * the application has now. The current version differs from the applied one → an offer; the
 * application differs from the applied one → the administrator changed it, and taking the offer
 * leaves it alone unless that field is asked for by name.
 */
import type { Application, AppliedPreset } from '../db/schema.js';
import { validationFailed } from '../http/problem.js';
import { TEST_CALLBACK_PATH } from '../oauth/test-sign-in.js';
import { findPreset } from './catalogue/index.js';
import { currentPresetFields, type PresetFields } from './apply.js';

type Field = keyof PresetFields;

/**
 * Each preset-controlled field as the application has it now. The panel's own Test sign-in
 * callback is left out of the redirect URIs: adding it is not a change to what the app uses.
 */
function currentValue(app: Application, field: Field, issuer: string): unknown {
  switch (field) {
    case 'redirectUris':
      return app.redirectUris.filter((uri) => uri !== `${issuer.replace(/\/$/, '')}${TEST_CALLBACK_PATH}`);
    case 'ldap':
      return { enabled: app.ldap.enabled };
    case 'radius':
      // The settings without the secrets and their dates: what a preset sets.
      return app.radius ? { clients: app.radius.clients.map(({ name, address }) => ({ name, address })), vlans: app.radius.vlans, defaultVlan: app.radius.defaultVlan } : null;
    case 'saml':
      return presetSamlView(app);
    default:
      return app[field];
  }
}

/**
 * The application's SAML settings in the shape a preset sets them (types.ts PresetSaml): what the
 * SP's metadata or an administrator adds beyond it (its certificates, signed requests, IdP-initiated
 * sign-on, ACS indexes) is not a change to what the preset set.
 */
function presetSamlView(app: Application): unknown {
  if (!app.saml || !app.samlEntityId) return null;
  const { acs, slo, nameId, attributes, signResponse, signAssertion } = app.saml;
  return { entityId: app.samlEntityId, acs: acs.map(({ url }) => ({ url })), slo, nameId, attributes, signResponse, signAssertion };
}

/** Equal as settings: lists of strings in any order, objects by their keys. */
export function sameSetting(a: unknown, b: unknown): boolean {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) {
      const items = value.map(canonical);
      return items.every((item) => typeof item === 'string') ? [...(items as string[])].sort() : items;
    }
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])]));
    }
    return value ?? null;
  };
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

export interface PresetDifference {
  field: string;
  /** What the preset set when the application was made (or last upgraded). */
  applied: unknown;
  /** What the preset's current version sets for the same inputs. */
  offered: unknown;
  /** What the application has now. */
  current: unknown;
  /** Whether an administrator changed this setting since: taking the offer leaves it unless named. */
  changedHere: boolean;
}

export interface PresetStatus {
  id: string;
  name: string;
  version: number;
  latestVersion: number;
  inputs: Record<string, string>;
  differences: PresetDifference[];
}

/** The preset an application came from, its version against the catalogue's, and what a newer version offers. */
export function presetStatus(issuer: string, app: Application & { preset: AppliedPreset }): PresetStatus {
  const preset = findPreset(app.preset.id);
  const base = { id: app.preset.id, version: app.preset.version, inputs: app.preset.inputs };
  // A preset that left the catalogue offers nothing; the application keeps what it has.
  if (!preset) return { ...base, name: app.preset.id, latestVersion: app.preset.version, differences: [] };
  const offered = currentPresetFields(preset, app.preset.inputs);
  const differences: PresetDifference[] = [];
  for (const field of Object.keys(offered) as Field[]) {
    const applied = app.preset.applied[field];
    if (sameSetting(applied, offered[field])) continue;
    const current = currentValue(app, field, issuer);
    differences.push({ field, applied: applied ?? null, offered: offered[field], current, changedHere: !sameSetting(current, applied) });
  }
  return { ...base, name: preset.name, latestVersion: preset.version, differences };
}

/**
 * What taking the offer changes: every offered field the administrator has not changed, plus the
 * changed ones named in `fields`; and the preset record as it will be (the new version, and the
 * applied values of the fields taken). Naming a field that is not offered is 400.
 */
export function upgradePlan(issuer: string, app: Application & { preset: AppliedPreset }, fields: string[] | undefined) {
  const status = presetStatus(issuer, app);
  const offeredFields = new Set(status.differences.map((d) => d.field));
  const unknown = (fields ?? []).filter((f) => !offeredFields.has(f));
  if (unknown.length) {
    throw validationFailed(unknown.map((f) => ({ path: `body.fields.${(fields ?? []).indexOf(f)}`, message: `"${f}" is not a setting the preset offers a change to` })));
  }
  const taken = status.differences.filter((d) => !d.changedHere || fields?.includes(d.field));
  const kept = status.differences.filter((d) => !taken.includes(d));
  const patch = Object.fromEntries(taken.map((d) => [d.field, d.offered]));
  const applied = { ...app.preset.applied, ...patch };
  const record: AppliedPreset = { ...app.preset, version: status.latestVersion, applied };
  return { status, patch, record, taken: taken.map((d) => d.field), kept: kept.map((d) => d.field) };
}

export function hasPreset(app: Application): app is Application & { preset: AppliedPreset } {
  return app.preset !== null && app.preset !== undefined;
}

