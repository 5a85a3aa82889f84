/**
 * `GET /api/auth/forward/start?rd=<original URL>` (spec forward-auth.md, "Signing in to a
 * protected host", step 1), on the issuer's host, where the Gatehouse session cookie lives.
 *
 * 1. `rd` must be an absolute http(s) URL, without credentials, on a host some application
 *    protects; anything else is a 400 page and no redirect (never an open redirector).
 * 2. The person is admitted as authorize admits them (oauth/authorize/admission.ts): signed in
 *    to the application's realm (its SSO group, or itself) on the hosted pages, stepped up to a
 *    second factor when it requires MFA, and a member by its sign-up policy (a suspended member,
 *    or one its policy turns away, sees the refusal page). Then its `forwardAuth.groups` (one of
 *    them, when set) and, for an application with explicit consent, the consent page — what the
 *    identity headers tell the site (FORWARD_AUTH_SCOPE).
 * 3. A one-time code for exactly rd's host and this browser (codes.ts), and a 302 to
 *    `<scheme>://<host>/.gatehouse/callback?code=…&rd=…`, which the protected host routes here.
 *    Only with a `challenge` from the protected host's `/.gatehouse/start`, which keeps its
 *    verifier in a cookie there (hand-over-state.ts; issue 49, H6): without one (or with a
 *    malformed one) the browser goes there first and comes back.
 * The hosted pages come back here when done (pages/sign-in-pages.ts `RESUME_PREFIXES`).
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { AppContext } from '../context.js';
import { admit } from '../oauth/authorize/admission.js';
import { CONSENT_PAGE, consentNeeded } from '../oauth/consent.js';
import { errorPageHandler } from '../oauth/error-page.js';
import { redirectToStepUp } from '../accounts/second-factor/flow.js';
import { flowQuery } from '../pages/sign-in-pages.js';
import { param, type RawParams } from '../oauth/params.js';
import { issueCode } from './codes.js';
import { HOST_START_PATH, validChallenge } from './hand-over-state.js';
import { FORWARD_AUTH_SCOPE } from './consent-request.js';
import { START_PATH } from './check.js';
import { groupsOfPerson } from './members.js';
import { passesGroupRule, requiredGroups } from '../applications/group-rule.js';
import { sendForwardError, sendRefusedPage } from './pages.js';
import type { ProtectedHosts, ProtectedSite } from './protected-hosts.js';

export const CALLBACK_PATH = '/.gatehouse/callback';

/** The start path that resumes the hand-over to `rd` (also the consent page's `return_to`). */
export const startPathFor = (rd: string) => `${START_PATH}?${new URLSearchParams({ rd }).toString()}`;

/** `rd` as a URL on a protected host, or undefined (step 1). */
export async function startTarget(hosts: ProtectedHosts, rd: string | undefined): Promise<{ url: URL; site: ProtectedSite } | undefined> {
  if (!rd || rd.length > 3000) return undefined;
  let url: URL;
  try {
    url = new URL(rd);
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) return undefined;
  const site = await hosts.find(url.host);
  return site ? { url, site } : undefined;
}

const noStoreRedirect = (reply: FastifyReply, to: string) => reply.header('cache-control', 'no-store').redirect(to, 302);

export const startRoute: FastifyPluginAsync<{ hosts: ProtectedHosts }> = async (app, { hosts }) => {
  const ctx: AppContext = app.ctx;

  app.get(START_PATH, { schema: { hide: true }, errorHandler: errorPageHandler }, async (request, reply) => {
    let rd: string | undefined;
    try {
      rd = param(request.query as RawParams, 'rd');
    } catch {
      rd = undefined;
    }
    const target = await startTarget(hosts, rd);
    if (!target) return sendForwardError(reply, 400, 'invalid_request', 'badRd');
    const { url, site } = target;
    const application = site.app;
    const startPath = startPathFor(url.href);

    const admission = await admit(ctx, request, application);
    if (admission.kind === 'sign_in') return noStoreRedirect(reply, `/sign-in?${flowQuery(application, startPath)}`);
    if (admission.kind === 'second_factor') return redirectToStepUp(ctx, request, reply, admission, application, startPath);
    if (admission.kind === 'denied') return sendRefusedPage(reply, application, { reason: admission.reason, email: admission.person.email }, startPath);
    const { person, session, membership } = admission;
    if (requiredGroups(application) && !passesGroupRule(application, await groupsOfPerson(ctx.db, person.id))) {
      return sendRefusedPage(reply, application, { reason: 'group_missing', email: person.email }, startPath);
    }
    if (await consentNeeded(ctx, application, membership, FORWARD_AUTH_SCOPE, false)) {
      return noStoreRedirect(reply, `${CONSENT_PAGE}?${new URLSearchParams({ return_to: startPath }).toString()}`);
    }
    let challenge: string | undefined;
    try {
      challenge = validChallenge(param(request.query as RawParams, 'challenge'));
    } catch {
      challenge = undefined;
    }
    if (!challenge) return noStoreRedirect(reply, `${url.origin}${HOST_START_PATH}?${new URLSearchParams({ rd: url.href }).toString()}`);
    const code = await issueCode(ctx.db, ctx.clock.now(), {
      applicationId: application.id, sessionId: session.id, personId: person.id, host: site.host.host, rd: url.href,
    }, challenge);
    return noStoreRedirect(reply, `${url.origin}${CALLBACK_PATH}?${new URLSearchParams({ code, rd: url.href }).toString()}`);
  });
};
