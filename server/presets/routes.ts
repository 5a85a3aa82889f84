/**
 * The presets API (spec presets-and-operations.md, "App presets"): the catalogue
 * (`GET /api/admin/presets`, `/:id`), each application's set-up text
 * (`GET /api/admin/applications/:id/setup`), and the preset an application came from with what a
 * newer version offers (`GET …/preset`, `POST …/preset/upgrade`). Creating from a preset is
 * `POST /api/admin/applications` (applications/routes.ts hands it to apply.ts).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorName } from '../http/admin-auth.js';
import { notFound, validationFailed } from '../http/problem.js';
import { adminErrors, adminSecurity as security, IdParams, NoQuery } from '../http/schemas.js';
import { getApplication } from '../applications/lookup.js';
import { updateApplication } from '../applications/service.js';
import type { TSchema } from 'typebox';
import { requireMayPatch } from '../applications/key-limits.js';
import { PRESETS, findPreset } from './catalogue/index.js';
import { applicationFields } from './apply.js';
import { runtimeOf, setupContext, setupFor } from './setup.js';
import { caPathProblem, DEFAULT_CA_PATH } from '../http/lan-trust-wire.js';
import { hasPreset, presetStatus, upgradePlan } from './upgrade.js';
import type { Preset } from './types.js';
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

function summary(preset: Preset) {
  return {
    id: preset.id,
    name: preset.name,
    category: preset.category,
    protocol: preset.protocol,
    summary: preset.summary,
    version: preset.version,
    testedWith: preset.testedWith,
    inputs: preset.inputs.map(({ pattern: _pattern, ...input }) => input),
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
      await updateApplication(ctx, application.id, plan.patch, actorName(request.actor), { preset: plan.record });
      const updated = await getApplication(ctx, application.id);
      return { taken: plan.taken, kept: plan.kept, preset: presetStatus(ctx.config.issuer, updated as typeof application) };
    },
  );
};
