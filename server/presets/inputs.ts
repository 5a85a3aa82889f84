/**
 * The rules for `presetInputs` (spec presets-and-operations.md: "Missing or malformed inputs are
 * 400 `validation_failed` naming `body.presetInputs.<key>`"). Every problem is collected, so one
 * answer names every bad input. Groups and applications named must exist (one indexed read per
 * kind), checked here so the error names the input rather than a field the preset derived from it.
 */
import { inArray } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { applications } from '../db/schema.js';
import { many } from '../db/store.js';
import type { FieldError } from '../http/problem.js';
import { isPrivateHost } from '../applications/redirect-uris.js';
import type { Preset, PresetInput, PresetInputs } from './types.js';
import { existingGroupIds } from '../groups/queries.js';

const PATH = 'body.presetInputs';
const GROUP_ID = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const APPLICATION_ID = /^[a-z0-9][a-z0-9_-]{1,62}$/;
const MAX_LENGTH = 2000;

/** A base URL as stored: absolute http(s), no credentials, query or fragment, no trailing slash. */
function checkUrl(raw: string): { value: string } | { error: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { error: 'must be an absolute URL, e.g. https://app.lan.example' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { error: 'must be an http(s) URL' };
  if (url.username || url.password) return { error: 'must not contain credentials' };
  if (url.search || url.hash || raw.includes('?') || raw.includes('#')) return { error: 'must not contain a query or fragment' };
  if (url.protocol === 'http:' && !isPrivateHost(url.hostname)) return { error: 'http is allowed only for loopback or private-network hosts; use https' };
  return { value: `${url.origin}${url.pathname}`.replace(/\/+$/, '') };
}

function checkOne(input: PresetInput, raw: unknown): { value?: string; error?: string } {
  if (raw === undefined || raw === null || raw === '') {
    if (input.required) return { error: 'is required' };
    return input.default === undefined ? {} : { value: input.default };
  }
  if (typeof raw !== 'string') return { error: 'must be a string' };
  if (raw.length > MAX_LENGTH) return { error: `must be at most ${MAX_LENGTH} characters` };
  switch (input.kind) {
    case 'url': {
      const checked = checkUrl(raw);
      return 'error' in checked ? checked : { value: checked.value };
    }
    case 'group':
      return GROUP_ID.test(raw) ? { value: raw } : { error: 'must be a group id (lower-case letters, digits, ., - and _)' };
    case 'application':
      return APPLICATION_ID.test(raw) ? { value: raw } : { error: 'must be an application id' };
    case 'text':
      if (input.pattern && !new RegExp(input.pattern.source).test(raw)) return { error: input.pattern.message };
      return input.normalise ? input.normalise(raw) : { value: raw };
  }
}

/**
 * The inputs completed with defaults, or every problem (unknown keys, missing or malformed
 * values, groups or applications that do not exist), each naming `body.presetInputs.<key>`.
 */
export async function checkPresetInputs(db: Db, preset: Preset, given: Record<string, unknown>): Promise<{ inputs: PresetInputs; errors: FieldError[] }> {
  const errors: FieldError[] = [];
  const inputs: Record<string, string> = {};
  const known = new Set(preset.inputs.map((i) => i.key));
  for (const key of Object.keys(given)) {
    if (!known.has(key)) errors.push({ path: `${PATH}.${key}`, message: `is not an input of the ${preset.id} preset` });
  }
  for (const input of preset.inputs) {
    const { value, error } = checkOne(input, given[input.key]);
    if (error) errors.push({ path: `${PATH}.${input.key}`, message: error });
    else if (value !== undefined) inputs[input.key] = value;
  }
  await checkExisting(db, preset, inputs, errors);
  return { inputs, errors };
}

/** Named groups and applications must exist; an application must be confidential (it authenticates). */
async function checkExisting(db: Db, preset: Preset, inputs: Record<string, string>, errors: FieldError[]) {
  const named = (kind: PresetInput['kind']) =>
    preset.inputs.filter((i) => i.kind === kind && inputs[i.key] !== undefined && !errors.some((e) => e.path === `${PATH}.${i.key}`));
  const groupInputs = named('group');
  if (groupInputs.length) {
    const ids = groupInputs.map((i) => inputs[i.key]!);
    const found = await existingGroupIds(db, ids);
    for (const input of groupInputs) {
      if (!found.has(inputs[input.key]!)) errors.push({ path: `${PATH}.${input.key}`, message: `there is no group "${inputs[input.key]}"` });
    }
  }
  const appInputs = named('application');
  if (appInputs.length) {
    const ids = appInputs.map((i) => inputs[i.key]!);
    const rows = await many(db.select({ id: applications.id, clientType: applications.clientType }).from(applications).where(inArray(applications.id, ids)));
    for (const input of appInputs) {
      const row = rows.find((r) => r.id === inputs[input.key]);
      if (!row) errors.push({ path: `${PATH}.${input.key}`, message: `there is no application "${inputs[input.key]}"` });
      else if (row.clientType !== 'web') errors.push({ path: `${PATH}.${input.key}`, message: `the application "${row.id}" is not a confidential (web) client` });
    }
  }
}
