/**
 * `GET /api/admin/config` (the configuration as YAML) and `POST /api/admin/config/apply` (plan
 * and apply a file; `?dryRun=1` plans and checks only, `?prune=1` deletes what the file's sections
 * leave out). Owner or admin token only (a file rewrites every application, group and
 * administrator): the plugin's rule for both (plugin.ts).
 *
 * The file is sent as `application/yaml` (the text itself), or as JSON `{ document, secrets,
 * unresolved }` — how `gatehouse config apply` sends it, with the secrets it resolved from its
 * own environment and files (references.ts).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorName } from '../http/admin-auth.js';
import { adminErrors, NoQuery, adminSecurity as security } from '../http/schemas.js';
import { Problem } from '../http/problem.js';

/** The work behind both routes (engine.ts), loaded on first use (issue 45, decision 0369). */
const engine = () => import('./engine.js');

/** A configuration file may be long (hundreds of applications); still read whole, so bounded. */
export const CONFIG_BODY_LIMIT = 1024 * 1024;
const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml'];
const tags = ['configuration'];

const Flag = Type.Optional(Type.Union(['1', '0', 'true', 'false'].map((v) => Type.Literal(v))));
const on = (flag: string | undefined) => flag === '1' || flag === 'true';

const ApplyBody = Type.Object(
  {
    document: Type.String({ maxLength: CONFIG_BODY_LIMIT, description: 'the configuration file, YAML' }),
    secrets: Type.Optional(Type.Record(Type.String({ maxLength: 1000 }), Type.String({ maxLength: 10_000 }), {
      maxProperties: 1000,
      description: 'values of the references the file names, by reference (`${NAME}`, `file:PATH`), resolved by the sender',
    })),
    unresolved: Type.Optional(Type.Record(Type.String({ maxLength: 1000 }), Type.String({ maxLength: 2000 }), {
      maxProperties: 1000,
      description: 'references the sender could not resolve, and why (reported with the file\'s problems)',
    })),
  },
  { additionalProperties: false },
);

const FieldChangeSchema = Type.Object(
  {
    field: Type.String({ description: 'dotted: `consent`, `authPolicy.mfa`' }),
    before: Type.Optional(Type.Unknown()),
    after: Type.Optional(Type.Unknown()),
    secret: Type.Optional(Type.Boolean({ description: 'a secret: before and after are its references (null: not set by a file), never its value' })),
  },
  { additionalProperties: false },
);

const ApplyAnswer = Type.Object(
  {
    dryRun: Type.Boolean(),
    plan: Type.Array(Type.Object(
      {
        action: Type.Union([Type.Literal('create'), Type.Literal('update'), Type.Literal('delete')]),
        kind: Type.Union(['passwordPolicy', 'ssoGroup', 'group', 'application', 'directorySource', 'administrator'].map((k) => Type.Literal(k))),
        id: Type.String({ description: 'the entry\'s key: an id, or an administrator\'s e-mail address' }),
        changes: Type.Array(FieldChangeSchema),
      },
      { additionalProperties: false },
    ), { description: 'what was (or, in a dry run, would be) changed, in order; empty when the server already matches the file' }),
    secrets: Type.Array(
      Type.Object({ path: Type.String(), value: Type.String() }, { additionalProperties: false }),
      { description: 'secrets the apply generated (a new web application\'s client secret, a webhook secret, an LDAP password), shown only in this answer' },
    ),
  },
  { additionalProperties: false },
);

const configRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  app.addContentTypeParser(YAML_TYPES, { parseAs: 'string', bodyLimit: CONFIG_BODY_LIMIT }, (_request, body, done) => done(null, body));

  app.get(
    '/config',
    {
      schema: {
        tags, security, summary: 'The configuration as one YAML document (owner only; secrets as references, never values)',
        querystring: NoQuery,
        response: { 200: { description: 'the configuration file', content: { 'application/yaml': { schema: Type.String() } } }, ...adminErrors },
      },
    },
    async (_request, reply) => {
      const { exportConfiguration, toYaml } = await engine();
      return reply.type('application/yaml; charset=utf-8').send(await toYaml(await exportConfiguration(ctx)));
    },
  );

  app.post(
    '/config/apply',
    {
      bodyLimit: CONFIG_BODY_LIMIT,
      schema: {
        tags, security,
        summary: 'Plan and apply a configuration file in one transaction (owner only; dryRun: plan and check only; prune: delete what the file leaves out)',
        consumes: ['application/json', ...YAML_TYPES],
        querystring: Type.Object({ dryRun: Flag, prune: Flag }, { additionalProperties: false }),
        body: {
          content: {
            'application/json': { schema: ApplyBody },
            ...Object.fromEntries(YAML_TYPES.map((type) => [type, { schema: Type.String({ description: 'the configuration file itself' }) }])),
          },
        },
        response: { 200: ApplyAnswer, ...adminErrors },
      },
    },
    async (request) => {
      const body = request.body as unknown;
      const input = typeof body === 'string' ? { document: body } : (body as { document: string; secrets?: Record<string, string>; unresolved?: Record<string, string> });
      if (typeof input?.document !== 'string') throw new Problem(400, 'validation_failed', 'Send the configuration file as application/yaml, or as JSON {"document": "..."}.');
      return (await engine()).applyConfiguration(ctx, {
        text: input.document,
        secrets: input.secrets ?? {},
        unresolved: input.unresolved ?? {},
        dryRun: on(request.query.dryRun),
        prune: on(request.query.prune),
        actor: actorName(request.actor),
      });
    },
  );
};

export { configRoutes };
