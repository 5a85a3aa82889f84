/**
 * The hosted device page `/device` (RFC 8628 §3.3, spec grants-and-logout.md): a person types the
 * code their device shows (or follows `verification_uri_complete`), signs in if needed, sees
 * which application asks for what, and approves or denies.
 * - Who may approve is decided by `admit` (authorize/admission.ts), the authorize endpoint's own
 *   check: the application's realm must be signed in (else the sign-in page, which comes back
 *   here), and its sign-up policy must admit the person. A refused person is told why and may
 *   switch accounts; the request stays pending for someone else.
 * - Approving starts a session of its own for the device ("<app> (device sign-in)" in the
 *   person's sessions list): its `sid` goes into the device's tokens, so signing that device out
 *   (or out everywhere, a password reset) ends them and tells the application (back-channel
 *   logout), without tying the device to this browser's session.
 * - Codes are single-use: decided once (a conditional update), then refused.
 * - Guessing: an address (and a signed-in person) gets `GATEHOUSE_DEVICE_CODE_FAILURE_LIMIT`
 *   (default 10) wrong or spent codes per 15 minutes, then 429 with `Retry-After`; against 20^8
 *   codes that live 10 minutes, a guess succeeds about once in 10⁸ windows.
 * - Forms carry the CSRF token; the lookup by GET changes nothing but the failure count.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import type { Application, DeviceAuthorization } from '../../db/schema.js';
import { positiveIntegerEnv } from '../../config.js';
import type { Tx } from '../../db/client.js';
import { recordAudit } from '../../audit/record.js';
import { checkFormToken, formToken } from '../../accounts/csrf.js';
import { createSession, readSession } from '../../accounts/session.js';
import { findApplication } from '../../applications/lookup.js';
import { preparePageScope } from '../../pages/page-scope.js';
import { renderPage } from '../../pages/render.js';
import { pageBrand } from '../../pages/brand.js';
import { scopeWords } from '../../pages/scope-words.js';
import { pageText } from '../../i18n/index.js';
import { flowQuery } from '../../pages/sign-in-pages.js';
import { WindowCounter } from '../../util/window-counter.js';
import { redirectToStepUp } from '../../accounts/second-factor/flow.js';
import { admit } from '../authorize/admission.js';
import { displayUserCode, normaliseUserCode } from './codes.js';
import { decide, findByUserCode, type Approval } from './store.js';
import { DEVICE_PAGE_PATH } from './authorization-route.js';
import { transaction } from '../../db/store.js';

const FAILURE_WINDOW_MS = 15 * 60_000;


const code = Type.Optional(Type.String({ maxLength: 40 }));
const Query = Type.Object({ user_code: code }, { additionalProperties: false });
const Form = Type.Object(
  { csrf_token: Type.Optional(Type.String({ maxLength: 200 })), user_code: code, action: Type.Optional(Type.Union([Type.Literal('approve'), Type.Literal('deny')])) },
  { additionalProperties: false },
);

type Found = { row: DeviceAuthorization; app: Application; userCode: string };

export const devicePageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  await preparePageScope(app);
  const failures = new WindowCounter(positiveIntegerEnv(ctx.config.env, 'GATEHOUSE_DEVICE_CODE_FAILURE_LIMIT', 10), FAILURE_WINDOW_MS);

  /** The keys a wrong code counts against: the address, and the person when signed in. */
  const failureKeys = async (request: FastifyRequest) => {
    const person = (await readSession(ctx, request))?.person.id;
    return person ? [`ip:${request.ip}`, `person:${person}`] : [`ip:${request.ip}`];
  };

  /** The entry form; `error` is a catalogue key (device.*) saying why the code did not work. */
  const showEntry = (request: FastifyRequest, reply: FastifyReply, typed: string, error?: string) => {
    const { t } = pageText(ctx.config, request);
    return renderPage(reply, 'device', {
      title: t('device.enterTitle'), step: 'enter', userCode: typed, error: error && t(error), csrfToken: formToken(ctx.config, request, reply),
    }, { here: DEVICE_PAGE_PATH });
  };

  /**
   * The pending request behind a typed code, or the entry form again saying why not. Refused
   * while the caller is over its budget of wrong codes; every miss (unknown, spent, expired)
   * counts, so spent codes cannot be probed for either.
   */
  const lookUp = async (request: FastifyRequest, reply: FastifyReply, typed: string): Promise<Found | FastifyReply> => {
    const now = ctx.clock.now().getTime();
    const keys = await failureKeys(request);
    const wait = Math.max(...keys.map((k) => failures.blocked(k, now) ?? 0));
    if (wait > 0) return showEntry(request, reply.status(429).header('retry-after', String(Math.max(1, Math.ceil(wait)))), typed, 'device.tooManyCodes');
    const userCode = normaliseUserCode(typed);
    const row = userCode ? await findByUserCode(ctx.db, userCode) : undefined;
    const app = row && await findApplication(ctx.db, row.applicationId);
    let error: string | undefined;
    if (!row || !app) error = 'device.invalidCode';
    else if (row.expiresAt.getTime() <= now) error = 'device.expiredCode';
    else if (row.status !== 'pending') error = 'device.usedCode';
    if (error || !row || !app) {
      for (const k of keys) failures.hit(k, now);
      return showEntry(request, reply.status(400), typed, error);
    }
    return { row, app, userCode: userCode! };
  };

  /** The sign-in page for the request's application, coming back to this code. */
  const toSignIn = (reply: FastifyReply, found: Found, switchAccount = false) => {
    const returnTo = `${DEVICE_PAGE_PATH}?user_code=${displayUserCode(found.userCode)}`;
    return reply.header('cache-control', 'no-store').redirect(`/sign-in?${flowQuery(found.app, returnTo, switchAccount ? { switch: '1' } : {})}`, 303);
  };

  app.get(DEVICE_PAGE_PATH, { schema: { hide: true, querystring: Query } }, async (request, reply) => {
    const typed = request.query.user_code?.trim();
    if (!typed) return showEntry(request, reply, '');
    const found = await lookUp(request, reply, typed);
    if (!found || !('row' in found)) return reply; // answered (a sent reply resolves to undefined when awaited)
    const admission = await admit(ctx, request, found.app);
    if (admission.kind === 'sign_in') return toSignIn(reply, found);
    const shown = displayUserCode(found.userCode);
    const { t } = pageText(ctx.config, request);
    // The application requires a second factor this password-only session lacks: step up, then back here.
    if (admission.kind === 'second_factor') return redirectToStepUp(ctx, request, reply, admission, found.app, `${DEVICE_PAGE_PATH}?user_code=${shown}`);
    if (admission.kind === 'denied') {
      return renderPage(reply.status(403), 'device', {
        title: t('device.refusedTitle'), step: 'denied', appName: found.app.name,
        message: t(`refused.${admission.reason === 'invite_only' ? 'inviteOnly' : admission.reason}`, { app: found.app.name }), userCode: shown,
        switchHref: `/sign-in?${flowQuery(found.app, `${DEVICE_PAGE_PATH}?user_code=${shown}`, { switch: '1' })}`,
      }, { brand: pageBrand(found.app) });
    }
    return renderPage(reply, 'device', {
      title: t('device.confirmTitle', { app: found.app.name }), step: 'confirm', appName: found.app.name, userCode: shown,
      asks: scopeWords(t, found.row.scope), who: admission.person.name ?? admission.person.email,
      email: admission.person.email, csrfToken: formToken(ctx.config, request, reply),
      switchHref: `/sign-in?${flowQuery(found.app, `${DEVICE_PAGE_PATH}?user_code=${shown}`, { switch: '1' })}`,
    }, { brand: pageBrand(found.app) });
  });

  app.post(DEVICE_PAGE_PATH, { schema: { hide: true, body: Form } }, async (request, reply) => {
    const form = request.body;
    checkFormToken(ctx.config, request, form.csrf_token);
    const found = await lookUp(request, reply, form.user_code?.trim() ?? '');
    if (!found || !('row' in found)) return reply; // answered (a sent reply resolves to undefined when awaited)
    // A typed code (the entry form) goes to its confirmation page first: approving needs a look at it.
    if (form.action === undefined) return reply.redirect(`${DEVICE_PAGE_PATH}?user_code=${displayUserCode(found.userCode)}`, 303);
    const admission = await admit(ctx, request, found.app);
    if (admission.kind === 'sign_in') return toSignIn(reply, found);
    if (admission.kind === 'second_factor') {
      return redirectToStepUp(ctx, request, reply, admission, found.app, `${DEVICE_PAGE_PATH}?user_code=${displayUserCode(found.userCode)}`);
    }
    if (admission.kind === 'denied') return toSignIn(reply, found, true);
    const now = ctx.clock.now();
    const { row, app: client } = found;
    const deny = form.action === 'deny';
    const decided = await decideOnce(ctx, async (tx) => {
      let decision: Approval | 'denied' = 'denied';
      if (!deny) {
        // The device's own session: named after the application, with the device's address and User-Agent.
        const device = await createSession(ctx.db, now, ctx.config, {
          personId: admission.person.id, userAgent: row.userAgent ?? undefined, ip: row.ip,
          device: pageText(ctx.config, request).t('device.deviceSession', { app: client.name, interpolation: { escapeValue: false } }).slice(0, 200),
          // The device's tokens say how the approving sign-in was made (acr/amr).
          amr: admission.session.amr,
        });
        decision = { personId: admission.person.id, membershipId: admission.membership.id, sessionId: device.session.id, authTime: admission.authTime };
      }
      if (!await decide(tx, row.id, now, decision)) return false;
      await recordAudit(tx, now, {
        actor: `person:${admission.person.id}`, action: deny ? 'device.denied' : 'device.approved',
        applicationId: client.id, target: row.id, details: { scope: row.scope },
      });
      return true;
    });
    if (!decided) return showEntry(request, reply.status(400), '', 'device.usedCode');
    const { t } = pageText(ctx.config, request);
    return renderPage(reply, 'device', {
      title: deny ? t('device.deniedTitle') : t('device.approvedTitle'), step: deny ? 'denied-done' : 'approved',
      appName: client.name,
    }, { brand: pageBrand(client), here: DEVICE_PAGE_PATH });
  });
};

class AlreadyDecided extends Error {}

/**
 * Runs a decision in one transaction; when `write` finds the request decided already (a second
 * tab, a race), everything it wrote (the device's session) is rolled back and false returned.
 */
async function decideOnce(ctx: AppContext, write: (tx: Tx) => Promise<boolean>): Promise<boolean> {
  try {
    return await transaction(ctx.db, async (tx) => {
      if (!(await write(tx))) throw new AlreadyDecided();
      return true;
    });
  } catch (error) {
    if (error instanceof AlreadyDecided) return false;
    throw error;
  }
}
