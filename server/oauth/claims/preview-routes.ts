/**
 * `GET /api/admin/applications/:id/users/:uid/claims` (spec claims-and-groups.md; the panel's
 * Claims tab): what a member's tokens would say about them right now, for a scope (default
 * `openid profile email groups`) — the ID token's claims about the person (fitted to its size, so
 * `groups_truncated` shows), userinfo's, and the access token's custom claims. The protocol's own
 * claims (`iss`, `aud`, `exp`, …) are left out: they say nothing about the person. Read-only;
 * an API key of the application with `users:read` may call it.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import type { Application } from '../../db/schema.js';
import { getApplication } from '../../applications/lookup.js';
import { notFound, validationFailed } from '../../http/problem.js';
import { adminErrors, adminSecurity as security } from '../../http/schemas.js';
import { OAuthError } from '../errors.js';
import { parseScope } from '../scopes.js';
import { accessTokenClaims, idTokenClaims, personClaims } from './compose.js';
import { previewSubject } from './queries.js';
import { claimGroups, memberSubject } from './subject.js';

const Claims = Type.Record(Type.String(), Type.Unknown());
const PreviewSchema = Type.Object(
  {
    scope: Type.String({ description: 'The scope the preview was made for, as it would be granted' }),
    idToken: Claims,
    userinfo: Claims,
    accessToken: Type.Record(Type.String(), Type.Unknown(), { description: 'The custom claims marked inAccessToken' }),
  },
  { additionalProperties: false },
);

export const DEFAULT_PREVIEW_SCOPE = 'openid profile email groups';

/**
 * What member `uid`'s tokens for `client` would say about them now, for `scope` (default
 * DEFAULT_PREVIEW_SCOPE, parsed as authorize parses it): 404 `user_not_found` for someone who is
 * no member, 400 for a scope the application refuses. Also what Test sign-in checks a chosen
 * member against (presets' check route).
 */
export async function previewClaims(ctx: AppContext, client: Application, uid: string, scopeText: string | undefined) {
  let scope: string;
  try {
    scope = parseScope(scopeText ?? DEFAULT_PREVIEW_SCOPE, client.unknownScopes).join(' ');
  } catch (error) {
    if (error instanceof OAuthError) throw validationFailed([{ path: 'query.scope', message: error.description }]);
    throw error;
  }
  const found = await previewSubject(ctx.db, client.id, uid);
  if (!found) throw notFound('user_not_found', `There is no user "${uid}" in application "${client.id}".`);
  const person = { ...found.person, updatedAt: found.person.updatedAt.getTime() };
  const subject = memberSubject(found.role, JSON.stringify(found.profile));
  const groups = await claimGroups(ctx, client, person.id, scope);
  const context = { issuer: ctx.config.issuer, nonce: null, sessionId: null };
  return {
    scope,
    idToken: { sub: person.id, ...idTokenClaims(client, person, scope, subject, groups, context) } as Record<string, unknown>,
    userinfo: { sub: person.id, ...personClaims(client, person, scope, subject, groups) } as Record<string, unknown>,
    accessToken: (accessTokenClaims(client, subject, groups) ?? {}) as Record<string, unknown>,
  };
}

export const claimsPreviewRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  app.get(
    '/applications/:id/users/:uid/claims',
    {
      schema: {
        tags: ['users'], security,
        summary: "Preview a member's claims: the ID token's, userinfo's and the access token's custom ones, for a scope",
        params: Type.Object({ id: Type.String({ maxLength: 200 }), uid: Type.String({ maxLength: 200 }) }),
        querystring: Type.Object({ scope: Type.Optional(Type.String({ maxLength: 1000, description: `Space-separated; default "${DEFAULT_PREVIEW_SCOPE}"` })) }, { additionalProperties: false }),
        response: { 200: PreviewSchema, ...adminErrors },
      },
    },
    async (request) => previewClaims(ctx, await getApplication(ctx, request.params.id), request.params.uid, request.query.scope),
  );
};
