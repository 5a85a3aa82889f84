/**
 * The hosted pages of forward auth. Some are served on the protected host itself, through its
 * proxy (the check's refusal page, the callback's errors): they carry `origin` (pages/render.ts),
 * so their stylesheet, logo and links are the issuer's.
 */
import type { FastifyReply } from 'fastify';
import type { Application } from '../db/schema.js';
import { pageText } from '../i18n/index.js';
import { renderPage } from '../pages/render.js';
import { pageBrand } from '../pages/brand.js';
import { flowQuery } from '../pages/sign-in-pages.js';
import { sendErrorPage } from '../oauth/error-page.js';
import type { RefusalReason } from './check.js';
import { REFUSAL_MESSAGE_KEY } from '../accounts/membership.js';

const MESSAGE_KEY: Record<RefusalReason | 'invite_only' | 'closed', string> = {
  ...REFUSAL_MESSAGE_KEY,
  not_member: 'forwardAuth.refused.notMember',
  no_person: 'forwardAuth.refused.noPerson',
  disabled: 'forwardAuth.refused.disabled',
};

/**
 * "You cannot use <app> with this account" (the OIDC refusal page's template), with "Use another
 * account" leading to the sign-in that resumes `startPath`. No way back: back is where the person
 * was refused.
 */
export function sendRefusedPage(
  reply: FastifyReply,
  app: Application,
  refusal: { reason: RefusalReason | 'invite_only' | 'closed'; email: string },
  startPath: string,
  origin?: string,
): FastifyReply {
  const { t } = pageText(reply.server.ctx.config, reply.request);
  const switchHref = `/sign-in?${flowQuery(app, startPath, { switch: '1' })}`;
  return renderPage(reply.status(403), 'refused', {
    title: t('refused.title', { app: app.name }),
    appName: app.name,
    reason: refusal.reason,
    message: t(MESSAGE_KEY[refusal.reason], { app: app.name }),
    email: refusal.email,
    backHref: undefined,
    switchHref,
  }, { brand: pageBrand(app), here: switchHref, origin });
}

/** The hosted error page with one of forward auth's sentences (`forwardAuth.<key>`). */
export function sendForwardError(reply: FastifyReply, status: number, code: string, key: string, app?: Application, origin?: string): FastifyReply {
  const { t } = pageText(reply.server.ctx.config, reply.request);
  return sendErrorPage(reply, status, code, t(`forwardAuth.${key}`), app, origin);
}
