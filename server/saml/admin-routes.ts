/**
 * The SAML identity provider in the admin API (under `/api/admin`, behind the admin guard; rules
 * in plugin.ts):
 * - `POST /applications/:id/saml/metadata` `{xml}` or `{url}`: the SP's metadata fills `entityId`,
 *   `acs`, `slo` and `spCertificates` of the application's `saml` (made with the defaults when it
 *   had none), through the application's own update, so its rules, its 409 `entity_id_in_use` and
 *   its audit entry are the same as a PATCH's. Not for API keys: it says where assertions go.
 * - `GET /saml/keys`: the IdP's signing keys (certificate, SHA-256 fingerprint, status), the
 *   metadata URL and the entity ID, for the panel and the CLI to show and copy;
 * - `POST /saml/keys/rotate`: publishes the next key (keys.ts: it signs after the activation delay;
 *   409 `key_rotation_pending` while one waits).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../context.js';
import { actorName, requireActorScope } from '../http/admin-auth.js';
import { validationFailed, type FieldError } from '../http/problem.js';
import { adminErrors, adminSecurity as security, IdParams, NoQuery, NullableTimestamp, Timestamp } from '../http/schemas.js';
import { positiveIntegerEnv } from '../config.js';
import { applicationSchemas } from '../applications/schemas.js';
import { getApplication, updateApplication } from '../applications/service.js';
import { webhookTargetPolicy } from '../webhooks/target-address.js';
import { DEFAULT_ACTIVATION_HOURS, listSamlKeys, rotateSamlKey, type SamlKeyRing } from './keys.js';
import { samlRecord, type SamlInput } from './settings.js';
import type { readSpMetadata } from './sp-metadata.js';
import { idpEntityId, METADATA_PATH, SLO_PATH, SSO_PATH } from './paths.js';

const MetadataBody = Type.Object(
  {
    xml: Type.Optional(Type.String({ minLength: 1, maxLength: 400_000, description: 'The SP\'s metadata XML (an md:EntityDescriptor)' })),
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'Where the SP publishes its metadata: fetched once, now' })),
  },
  { additionalProperties: false, minProperties: 1, maxProperties: 1, description: 'Exactly one of xml or url' },
);

const KeySchema = Type.Object(
  {
    id: Type.String(),
    status: Type.Union(['next', 'active', 'retiring', 'retired'].map((s) => Type.Literal(s)), {
      description: 'next: in the metadata, signs from activatesAt; active: signs; retiring: still in the metadata until expiresAt; retired: gone',
    }),
    certificate: Type.String({ description: 'The X.509 certificate (PEM) SPs verify signatures with' }),
    fingerprint: Type.String({ description: 'SHA-256 fingerprint of the certificate, colon-separated hex' }),
    notAfter: Timestamp,
    createdAt: Timestamp,
    activatesAt: Timestamp,
    retiredAt: NullableTimestamp,
    expiresAt: NullableTimestamp,
  },
  { additionalProperties: false },
);
const KeysAnswer = Type.Object(
  {
    entityId: Type.String({ description: 'The identity provider\'s entity ID: <issuer>/saml' }),
    metadataUrl: Type.String(),
    ssoUrl: Type.String(),
    sloUrl: Type.String(),
    keys: Type.Array(KeySchema, { description: 'Newest first' }),
  },
  { additionalProperties: false },
);
const RotateAnswer = Type.Object({ key: KeySchema, previous: Type.Array(KeySchema) }, { additionalProperties: false });

/** The SAML settings after importing metadata: the imported four over what the application had, or the defaults. */
function imported(current: ReturnType<typeof samlRecord>, from: NonNullable<ReturnType<typeof readSpMetadata>>): SamlInput {
  const kept: Partial<SamlInput> = current
    ? {
        nameId: current.nameId.source === null ? { format: current.nameId.format } : { format: current.nameId.format, source: current.nameId.source },
        attributes: current.attributes, signResponse: current.signResponse, signAssertion: current.signAssertion,
        wantAuthnRequestsSigned: current.wantAuthnRequestsSigned, idpInitiated: current.idpInitiated,
      }
    : {};
  return { ...kept, entityId: from.entityId, acs: from.acs, slo: from.slo, spCertificates: from.spCertificates };
}

export function samlAdminRoutes(ctx: AppContext, keys: SamlKeyRing): FastifyPluginAsyncTypebox {
  return async (app) => {
    const schemas = applicationSchemas(ctx.registries.applicationFields.all);
    const endpoints = () => ({
      entityId: idpEntityId(ctx.config.issuer),
      metadataUrl: `${ctx.config.issuer}${METADATA_PATH}`,
      ssoUrl: `${ctx.config.issuer}${SSO_PATH}`,
      sloUrl: `${ctx.config.issuer}${SLO_PATH}`,
    });

    app.post(
      '/applications/:id/saml/metadata',
      {
        schema: {
          tags: ['applications'], security, summary: 'Fill the application\'s SAML settings (entityId, acs, slo, spCertificates) from the SP\'s metadata',
          params: IdParams, querystring: NoQuery, body: MetadataBody,
          response: { 200: schemas.withSecrets, ...adminErrors },
        },
      },
      async (request) => {
        requireActorScope(request.actor, undefined, 'import SAML metadata');
        const current = await getApplication(ctx, request.params.id);
        // The metadata reader is SAML's protocol code, loaded on first use (protocol.ts).
        const { fetchSpMetadata, readSpMetadata } = await import('./protocol.js');
        const errors: FieldError[] = [];
        const xml = request.body.url !== undefined
          ? await fetchSpMetadata(request.body.url, webhookTargetPolicy(ctx), 'body.url', errors)
          : request.body.xml!;
        const read = xml === undefined ? undefined : readSpMetadata(xml, request.body.url !== undefined ? 'body.url' : 'body.xml', errors);
        if (!read) throw validationFailed(errors);
        return await updateApplication(ctx, current.id, { saml: imported(samlRecord(current.saml, current.samlEntityId), read) }, actorName(request.actor));
      },
    );

    app.get(
      '/saml/keys',
      { schema: { tags: ['keys'], security, summary: 'The SAML identity provider\'s signing keys and endpoints', querystring: NoQuery, response: { 200: KeysAnswer, ...adminErrors } } },
      async () => {
        await keys.current();
        return { ...endpoints(), keys: await listSamlKeys(ctx.db, ctx.clock.now()) };
      },
    );

    app.post(
      '/saml/keys/rotate',
      {
        schema: {
          tags: ['keys'], security,
          summary: 'Publish the next SAML signing key: in the metadata at once, signing after GATEHOUSE_SAML_KEY_ACTIVATION_HOURS (default a week)',
          querystring: NoQuery, response: { 201: RotateAnswer, ...adminErrors },
        },
      },
      async (request, reply) => {
        await keys.current();
        const hours = positiveIntegerEnv(ctx.config.env, 'GATEHOUSE_SAML_KEY_ACTIVATION_HOURS', DEFAULT_ACTIVATION_HOURS, 8760);
        const rotated = await rotateSamlKey(ctx.db, ctx.config.issuer, ctx.clock.now(), hours, actorName(request.actor));
        keys.invalidate();
        return reply.status(201).header('location', '/api/admin/saml/keys').send(rotated);
      },
    );
  };
}
