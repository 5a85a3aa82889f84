/**
 * Signing-key administration under `/api/admin` (admin token only: API keys are refused by
 * `requireAdmin` outside their application's paths): list keys with their status, and rotate —
 * every algorithm's key at once (oauth/keys.ts). Private parts never leave the store.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAdmin, actorName } from '../http/admin-auth.js';
import { adminErrors, NullableTimestamp, Timestamp, adminSecurity as security } from '../http/schemas.js';
import { listKeys, rotateSigningKey, type KeyRing } from './keys.js';
import { SIGNING_ALGS } from './signing-algorithms.js';
import { retiringWindowSeconds } from '../ops/token-lifetime.js';

const KeySchema = Type.Object(
  {
    kid: Type.String(),
    alg: Type.Union(SIGNING_ALGS.map((alg) => Type.Literal(alg)), { description: 'The one algorithm this key signs and verifies: RS256 (RSA-2048), ES256 (P-256) or EdDSA (Ed25519)' }),
    status: Type.Union([Type.Literal('next'), Type.Literal('active'), Type.Literal('retiring'), Type.Literal('retired')], {
      description: 'next: published, signs from activatesAt; active: signs; retiring: published until expiresAt for the tokens it signed; retired: gone from the JWKS.',
    }),
    createdAt: Timestamp,
    /** When the key started (or starts) signing. */
    activatesAt: Timestamp,
    retiredAt: NullableTimestamp,
    expiresAt: NullableTimestamp,
  },
  { additionalProperties: false },
);
const tags = ['keys'];

export const adminKeyRoutes: FastifyPluginAsyncTypebox<{ keys: KeyRing }> = async (app, { keys }) => {
  const { ctx } = app;
  app.addHook('onRequest', requireAdmin);

  app.get(
    '/keys',
    { schema: { tags, security, summary: 'List signing keys and their status', response: { 200: Type.Object({ keys: Type.Array(KeySchema) }, { additionalProperties: false }), ...adminErrors } } },
    async () => {
      await keys.ensure();
      return { keys: await listKeys(ctx.db, ctx.clock.now()) };
    },
  );

  app.post(
    '/keys/rotate',
    {
      schema: {
        tags, security,
        summary: 'Publish a new signing key of every algorithm; they sign after the JWKS cache lifetime, the previous ones stay published until their tokens expire',
        response: {
          201: Type.Object(
            {
              // The new RS256 key (also in `keys`): the answer's shape from before there were other algorithms.
              key: KeySchema,
              keys: Type.Array(KeySchema, { description: 'The new keys, one per algorithm: RS256, ES256, EdDSA' }),
              previous: Type.Array(KeySchema, { description: 'The keys they take over from' }),
            },
            { additionalProperties: false },
          ),
          ...adminErrors,
        },
      },
    },
    async (request, reply) => {
      await keys.ensure();
      const now = ctx.clock.now();
      // Retired keys stay published as long as any token they signed may live, also tokens issued
      // before a restart with a shorter lifetime (ops/token-lifetime.ts).
      const rotated = await rotateSigningKey(ctx.db, now, await retiringWindowSeconds(ctx.db, now, ctx.config.accessTokenTtl), actorName(request.actor));
      keys.invalidate();
      const all = await listKeys(ctx.db, now);
      const created = rotated.keys.map(({ kid }) => kid);
      // The same records (and status words) as GET /api/admin/keys, in its order.
      return reply.status(201).header('location', '/api/admin/keys').send({
        key: all.find((k) => k.kid === rotated.kid)!,
        keys: all.filter((k) => created.includes(k.kid)),
        previous: all.filter((k) => rotated.retired.includes(k.kid)),
      });
    },
  );
};
