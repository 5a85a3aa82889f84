/**
 * The presets API (spec presets-and-operations.md, "App presets"): the catalogue
 * (`GET /api/admin/presets`, `/:id`), each application's set-up text
 * (`GET /api/admin/applications/:id/setup`), and the preset an application came from with what a
 * newer version offers (`GET …/preset`, `POST …/preset/upgrade`), and the preset's requirements
 * against what a chosen member's tokens would carry (`GET …/users/:uid/preset-checks`, the panel's
 * Test sign-in "as a member", read from the claims preview: nobody signs in as anyone else).
 * Creating from a preset is
 * `POST /api/admin/applications` (applications/routes.ts hands it to apply.ts).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorName, managesOf } from '../http/admin-auth.js';
import { notFound, validationFailed } from '../http/problem.js';
import { adminErrors, adminSecurity as security, IdParams, NoQuery } from '../http/schemas.js';
import { getApplication } from '../applications/lookup.js';
import { updateApplication } from '../applications/service.js';
import type { TSchema } from 'typebox';
import { requireMayPatch } from '../applications/key-limits.js';
import { PRESETS, findPreset } from './catalogue/index.js';
import { appNameOf, applicationFields } from './apply.js';
import { runtimeOf, setupContext, setupFor } from './setup.js';
import { caPathProblem, DEFAULT_CA_PATH } from '../http/lan-trust-wire.js';
import { hasPreset, presetStatus, upgradePlan } from './upgrade.js';
import type { Preset } from './types.js';
import { presetChecksOfClaims } from './requirements.js';
import { previewClaims } from '../oauth/claims/preview-routes.js';
import {
  PresetDetailSchema,
  PresetListSchema,
  PresetStatusSchema,
  PresetUpgradeBodySchema,
  PresetUpgradeSchema,
  SetupQuery,
  SetupSchema,
} from './schemas.js';

const tags = ['presets'];

const CheckSchema = Type.Object({ text: Type.String(), passed: Type.Boolean(), detail: Type.String() }, { additionalProperties: false });
const MemberChecksSchema = Type.Object(
  {
    scope: Type.String({ description: 'The scope checked: the one the app asks for (its preset\'s), or the one given' }),
    checks: Type.Array(CheckSchema, { description: 'The preset\'s requirements against what this member\'s tokens would carry (empty without a preset)' }),
  },
  { additionalProperties: false },
);

/** The scope Test sign-in asks for: the scopes the preset's app asks for, when they include openid. */
export function testScope(preset: Preset | undefined): string {
  const scopes = preset?.client.scopes ?? [];
  return scopes.includes('openid') ? scopes.join(' ') : 'openid profile email';
}

function summary(preset: Preset) {
  return {
    id: preset.id,
    name: preset.name,
    appName: appNameOf(preset),
    category: preset.category,
    protocol: preset.protocol,
    summary: preset.summary,
    version: preset.version,
    testedWith: preset.testedWith,
    inputs: preset.inputs.map(({ pattern: _pattern, normalise: _normalise, ...input }) => input),
  };
}

/** What the preset sets, each input shown as `{key}`. */
function detail(preset: Preset) {
  const placeholders = Object.fromEntries(preset.inputs.map((input) => [input.key, `{${input.key}}`]));
  return {
    ...summary(preset),
    client: preset.client,
    sets: applicationFields(preset.application(placeholders)),
    requirements: preset.requirements(placeholders).map((r) => ({ kind: r.kind, ...('claim' in r ? { claim: r.claim } : {}), text: r.text })),
    sources: preset.sources,
    caveats: preset.caveats,
  };
}

export const presetRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  // The set-up text with the parts other plugins add (plugin-api/registries.ts `setupSections`), and their query parameters.
  const sections = ctx.registries.setupSections.all;
  const setupSchema = sections.length
    ? Type.Object({ ...SetupSchema.properties, ...Object.fromEntries(sections.map((s) => [s.name, s.schema])) }, { additionalProperties: false, description: (SetupSchema as { description?: string }).description })
    : SetupSchema;
  const sectionQuery = Object.fromEntries(sections.flatMap((s) => Object.entries(s.query ?? {}).map(([name, schema]) => [name, Type.Optional(schema as TSchema)])));
  const setupQuery = Object.keys(sectionQuery).length ? Type.Object({ ...SetupQuery.properties, ...sectionQuery }, { additionalProperties: false }) : SetupQuery;

  app.get(
    '/presets',
    { schema: { tags, security, summary: 'List the app presets', querystring: NoQuery, response: { 200: PresetListSchema, ...adminErrors } } },
    async () => ({ presets: PRESETS.map(summary) }),
  );

  app.get(
    '/presets/:id',
    { schema: { tags, security, summary: 'Get an app preset and what it sets', params: IdParams, querystring: NoQuery, response: { 200: PresetDetailSchema, ...adminErrors } } },
    async (request) => {
      const preset = findPreset(request.params.id);
      if (!preset) throw notFound('preset_not_found', `There is no preset "${request.params.id}".`);
      return detail(preset);
    },
  );

  app.get(
    '/applications/:id/setup',
    {
      schema: {
        tags, security, summary: 'What to configure in the app (settings, files, notes); secrets as placeholders',
        params: IdParams, querystring: setupQuery, response: { 200: setupSchema, ...adminErrors },
      },
    },
    async (request) => {
      const caPath = request.query.caPath ?? DEFAULT_CA_PATH;
      const problem = caPathProblem(caPath);
      if (problem) throw validationFailed([{ path: 'query.caPath', message: problem }], `caPath ${problem}.`);
      const application = await getApplication(ctx, request.params.id);
      const presetId = application.preset?.id;
      const trust = ctx.lanTrust.setup(runtimeOf(presetId), caPath);
      const query = request.query as Record<string, string | undefined>;
      const parts: [string, unknown][] = [];
      for (const section of sections) parts.push([section.name, await section.value(application, query)]);
      return { ...setupFor(setupContext(ctx.config, application, trust), presetId), trust, ...Object.fromEntries(parts) };
    },
  );

  app.get(
    '/applications/:id/preset',
    {
      schema: {
        tags, security, summary: 'The preset the application came from, and what a newer version of it offers',
        params: IdParams, querystring: NoQuery, response: { 200: PresetStatusSchema, ...adminErrors },
      },
    },
    async (request) => {
      const application = await getApplication(ctx, request.params.id);
      if (!hasPreset(application)) throw notFound('not_from_preset', `The application "${application.id}" was not created from a preset.`);
      return presetStatus(ctx.config.issuer, application);
    },
  );

  app.get(
    '/applications/:id/users/:uid/preset-checks',
    {
      schema: {
        tags, security,
        summary: "The requirements of the application's preset against what a member's tokens would carry now (nobody signs in)",
        params: Type.Object({ id: Type.String({ maxLength: 200 }), uid: Type.String({ maxLength: 200 }) }),
        querystring: Type.Object({ scope: Type.Optional(Type.String({ maxLength: 1000, description: 'Space-separated; default: the scopes the app asks for' })) }, { additionalProperties: false }),
        response: { 200: MemberChecksSchema, ...adminErrors },
      },
    },
    async (request) => {
      const application = await getApplication(ctx, request.params.id);
      const preset = application.preset ? findPreset(application.preset.id) : undefined;
      const preview = await previewClaims(ctx, application, request.params.uid, request.query.scope ?? testScope(preset));
      const scopes = preview.scope.split(' ');
      const checks = presetChecksOfClaims(application.preset, {
        id: scopes.includes('openid') ? preview.idToken : undefined,
        idAlg: application.signingAlg,
        access: preview.accessToken,
        refreshToken: scopes.includes('offline_access') && application.grantTypes.includes('refresh_token'),
        scope: preview.scope,
      });
      return { scope: preview.scope, checks };
    },
  );

  app.post(
    '/applications/:id/preset/upgrade',
    {
      schema: {
        tags, security,
        summary: 'Take what the current preset version offers: settings nobody changed, and the changed ones named in fields',
        params: IdParams, querystring: NoQuery, body: Type.Optional(PresetUpgradeBodySchema),
        response: { 200: PresetUpgradeSchema, ...adminErrors },
      },
    },
    async (request) => {
      const application = await getApplication(ctx, request.params.id);
      if (!hasPreset(application)) throw notFound('not_from_preset', `The application "${application.id}" was not created from a preset.`);
      const plan = upgradePlan(ctx.config.issuer, application, request.body?.fields);
      requireMayPatch(ctx, request.actor, application, plan.patch);
      await updateApplication(ctx, application.id, plan.patch, actorName(request.actor), { preset: plan.record, manages: managesOf(request.actor) });
      const updated = await getApplication(ctx, application.id);
      return { taken: plan.taken, kept: plan.kept, preset: presetStatus(ctx.config.issuer, updated as typeof application) };
    },
  );
};
