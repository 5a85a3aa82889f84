/**
 * `POST /api/auth/invitations/accept` `{token}`: the JSON way for a signed-in person to accept an
 * invitation (the invite page does the same through a form). Session cookie, JSON CSRF rule.
 * 200 `{applicationId, membershipId, role, redirectTo}`; 401 without a session; 404 unknown link;
 * 409 `invitation_not_pending` (accepted, revoked, expired); 403 `invitation_wrong_account`, or
 * `signup_not_allowed` while the application's policy is `closed`.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { checkJsonWrite } from '../accounts/csrf.js';
import { readSession } from '../accounts/session.js';
import { unauthorized } from '../http/problem.js';
import { problemRef } from '../http/schemas.js';
import { redeemInvitation } from './redeem.js';

const AcceptBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
const AcceptResponse = Type.Object({
  applicationId: Type.String(),
  membershipId: Type.String(),
  role: Type.String(),
  redirectTo: Type.String(),
});

export const invitationAcceptRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  app.post(
    '/api/auth/invitations/accept',
    {
      onRequest: async (request) => checkJsonWrite(ctx.config, request),
      schema: {
        tags: ['invitations'], summary: 'Accept an invitation as the signed-in person',
        body: AcceptBody,
        response: { 200: AcceptResponse, 400: problemRef, 401: problemRef, 403: problemRef, 404: problemRef, 409: problemRef },
      },
    },
    async (request, reply) => {
      const signedIn = await readSession(ctx, request);
      if (!signedIn) throw unauthorized('Sign in first, then accept the invitation.', 'unauthorized', 'Cookie');
      const { membership, app: application, redirectTo } = await redeemInvitation(ctx, request.body.token, signedIn.person);
      reply.header('cache-control', 'no-store');
      return { applicationId: application.id, membershipId: membership.id, role: membership.role, redirectTo };
    },
  );
};
