/**
 * Single logout (SAML 2.0 Profiles §4.4; spec saml.md, "Single logout"), front channel:
 *
 * - An SP's LogoutRequest at `/saml/slo` (HTTP-Redirect or HTTP-POST; signed, and verified with
 *   its certificates, whenever it has certificates) names a SAML session by its SessionIndex (or
 *   by NameID). The Gatehouse session behind it ends at once (accounts/session.ts `endSession`:
 *   its OIDC back-channel logouts are queued as for any sign-out) and the browser's cookie is
 *   cleared when it is that session. A session that is gone already is nothing to end.
 * - Then every other SP of that session with a single-logout endpoint gets a LogoutRequest, one
 *   after another, through the browser: our signed LogoutRequest goes out, the SP's LogoutResponse
 *   comes back to `/saml/slo` (found by its InResponseTo), and the next one goes. The round is
 *   bounded: 10 s after it started (LOGOUT_BUDGET_MS) the SPs not told yet are skipped.
 * - Last, the initiating SP gets our signed LogoutResponse (`PartialLogout` under Success when an
 *   SP was skipped or did not answer Success); a logout started by Gatehouse itself (the account
 *   page, an OIDC end-session: `startBrowserLogout`) ends where that sign-out would have gone.
 * Everything that ends sessions happens before the first hop: an SP that keeps the browser cannot
 * keep anyone signed in. Audited `saml.logout`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { clearSessionCookie, endSession, readSession } from '../accounts/session.js';
import { recordAudit } from '../audit/record.js';
import type { Application, SamlLogout, SamlLogoutFinish, SamlSession } from '../db/schema.js';
import { transaction } from '../db/store.js';
import { pageText } from '../i18n/index.js';
import { pageBrand } from '../pages/brand.js';
import { renderPage } from '../pages/render.js';
import { redirectQuery, type Binding, type Carried, type MessageParam } from './bindings.js';
import { logoutRequestXml, logoutResponseXml, newMessageId, type CanonicalXml } from './builder.js';
import { messageKind, readLogoutRequest, readLogoutResponse, type LogoutRequest } from './messages.js';
import { sendPostForm } from './pages.js';
import {
  advanceLogout,
  endSamlSessions,
  findApplication,
  findSpByEntityId,
  finishLogout,
  liveSamlSessions,
  logoutAwaiting,
  samlSessionByIndex,
  samlSessionsByNameId,
  samlSessionsByIds,
  startLogout,
} from './queries.js';
import { fromSp, SamlRefusal } from './refusal.js';
import { ALG, signQuery, signRoot } from './signature.js';
import { checkMessageSignature, type SamlService } from './sso.js';
import { idpEntityId, SLO_PATH } from './paths.js';
import { parseXml } from './xml.js';

/** The whole round of front-channel LogoutRequests ends this long after it started. */
export const LOGOUT_BUDGET_MS = 10_000;
/** How long an SP may take to act on our LogoutRequest (its NotOnOrAfter). */
const LOGOUT_REQUEST_LIFETIME_MS = 5 * 60_000;

/** Verifies a message from `sp` (signed whenever it has certificates); throws SamlRefusal. */
function checkSigned(sp: Application, carried: Carried, doc: Document, sloUrl: string, destination: string | undefined): void {
  const signed = checkMessageSignature(sp, carried, doc);
  if (!signed && sp.saml!.spCertificates.length) throw new SamlRefusal('unsigned', 'the SP has certificates, so its logout messages must be signed');
  if (destination !== undefined ? destination !== sloUrl : signed) throw new SamlRefusal('bad_destination', 'the message\'s Destination is not this identity provider\'s SLO URL');
}

/** `/saml/slo`: an SP's LogoutRequest or LogoutResponse. */
export async function receiveSlo(svc: SamlService, request: FastifyRequest, reply: FastifyReply, carried: Carried): Promise<FastifyReply> {
  const { ctx } = svc;
  const now = ctx.clock.now();
  const doc = parseXml(carried.xml);
  const kind = messageKind(doc);
  const sloUrl = `${ctx.config.issuer}${SLO_PATH}`;
  if (kind === 'LogoutResponse' && carried.param === 'SAMLResponse') {
    const res = readLogoutResponse(doc, now);
    const sp = await findSpByEntityId(ctx.db, res.issuer);
    if (!sp?.saml) throw new SamlRefusal('unknown_sp', 'the Issuer is not a registered service provider');
    return await fromSp(sp, async () => {
      checkSigned(sp, carried, doc, sloUrl, res.destination);
      const logout = res.inResponseTo ? await logoutAwaiting(ctx.db, res.inResponseTo) : undefined;
      if (!logout) throw new SamlRefusal('unknown_request', 'the logout response answers no logout in progress');
      return await nextHop(svc, request, reply, logout, res.success);
    });
  }
  if (kind !== 'LogoutRequest' || carried.param !== 'SAMLRequest') throw new SamlRefusal('unexpected_message', 'the message is not a LogoutRequest or a LogoutResponse');
  const req = readLogoutRequest(doc, now);
  const sp = await findSpByEntityId(ctx.db, req.issuer);
  if (!sp?.saml) throw new SamlRefusal('unknown_sp', 'the Issuer is not a registered service provider');
  return await fromSp(sp, () => logoutRequested(svc, request, reply, carried, doc, req, sp));
}

async function logoutRequested(svc: SamlService, request: FastifyRequest, reply: FastifyReply, carried: Carried, doc: Document, req: LogoutRequest, sp: Application): Promise<FastifyReply> {
  const { ctx } = svc;
  const now = ctx.clock.now();
  checkSigned(sp, carried, doc, `${ctx.config.issuer}${SLO_PATH}`, req.destination);

  // The SAML sessions named: by SessionIndex, else every one of this SP with the NameID.
  let named: SamlSession[];
  if (req.sessionIndexes.length) {
    const found = await Promise.all(req.sessionIndexes.slice(0, 10).map((index) => samlSessionByIndex(ctx.db, index)));
    named = found.filter((s): s is SamlSession => !!s && s.applicationId === sp.id && s.nameId === req.nameId);
  } else {
    named = await samlSessionsByNameId(ctx.db, sp.id, req.nameId);
  }
  const sessionIds = [...new Set(named.map((s) => s.sessionId))];
  const current = await readSession(ctx, request);
  await transaction(ctx.db, async (tx) => {
    for (const sessionId of sessionIds) await endSession(ctx, tx, now, sessionId, 'end_session');
    await endSamlSessions(tx, named.map((s) => s.id), now);
    await recordAudit(tx, now, {
      actor: named[0] ? `person:${named[0].personId}` : 'anonymous', action: 'saml.logout', applicationId: sp.id, target: named[0]?.personId ?? null,
      details: { initiator: 'sp', sessionIds },
    });
  });
  if (current && sessionIds.includes(current.session.id)) clearSessionCookie(reply, ctx.config);
  const finish: SamlLogoutFinish = sp.saml!.slo
    ? { kind: 'sp', applicationId: sp.id, inResponseTo: req.id, relayState: carried.relayState ?? null }
    : { kind: 'page', applicationId: sp.id };
  return await beginRound(svc, request, reply, sessionIds, finish);
}

/**
 * Single logout started by Gatehouse (the account page's sign-out, an OIDC end-session;
 * plugin-api `logoutFlows`), after the sessions ended: the SAML SPs of those sessions are told one
 * after another, then the browser goes to `next` (undefined: the signed-out page, for
 * `application`). Undefined when no SP of them has a single-logout endpoint (nothing to do).
 */
export async function startBrowserLogout(
  svc: SamlService,
  request: FastifyRequest,
  reply: FastifyReply,
  ended: { sessionIds: string[]; next: string | undefined; application: Application | undefined },
): Promise<FastifyReply | undefined> {
  const live = (await liveSamlSessions(svc.ctx.db, ended.sessionIds)).filter(({ app }) => app.saml?.slo);
  if (!live.length) return undefined;
  const now = svc.ctx.clock.now();
  await recordAudit(svc.ctx.db, now, {
    actor: `person:${live[0]!.s.personId}`, action: 'saml.logout', target: live[0]!.s.personId,
    details: { initiator: 'gatehouse', sessionIds: ended.sessionIds, applications: live.map(({ app }) => app.id) },
  });
  const finish: SamlLogoutFinish = ended.next !== undefined ? { kind: 'url', url: ended.next } : { kind: 'page', applicationId: ended.application?.id ?? null };
  return await beginRound(svc, request, reply, ended.sessionIds, finish);
}

/** Records the round (the SPs still to tell) and takes its first hop. */
async function beginRound(svc: SamlService, request: FastifyRequest, reply: FastifyReply, sessionIds: string[], finish: SamlLogoutFinish): Promise<FastifyReply> {
  const now = svc.ctx.clock.now();
  const initiator = finish.kind === 'sp' ? finish.applicationId : undefined;
  const others = (await liveSamlSessions(svc.ctx.db, sessionIds)).filter(({ s, app }) => app.saml?.slo && s.applicationId !== initiator);
  const logout = await startLogout(svc.ctx.db, {
    sessionId: sessionIds[0] ?? '', pending: others.map(({ s }) => s.id), awaiting: null, finish, complete: true, startedAt: now,
    deadline: new Date(now.getTime() + LOGOUT_BUDGET_MS),
  });
  return await nextHop(svc, request, reply, logout, true);
}

/** Tells the next SP, or ends the round; `answered`: whether the SP just heard from said Success. */
async function nextHop(svc: SamlService, request: FastifyRequest, reply: FastifyReply, logout: SamlLogout, answered: boolean): Promise<FastifyReply> {
  const { ctx } = svc;
  const now = ctx.clock.now();
  const complete = logout.complete && answered;
  const overdue = now.getTime() > logout.deadline.getTime();
  const [next] = overdue ? [] : await samlSessionsByIds(ctx.db, logout.pending.slice(0, 1));
  if (!next || !next.app.saml?.slo) {
    if (next && logout.pending.length > 1) {
      // An SP whose endpoint was removed meanwhile: skip it.
      if (!(await advanceLogout(ctx.db, logout.handleHash, logout.awaiting, { pending: logout.pending.slice(1), awaiting: logout.awaiting, complete: false }))) throw raced();
      return await nextHop(svc, request, reply, { ...logout, pending: logout.pending.slice(1), complete: false }, true);
    }
    await finishLogout(ctx.db, logout.handleHash);
    return await finishRound(svc, request, reply, logout.finish, complete && logout.pending.length === 0);
  }
  const id = newMessageId();
  if (!(await advanceLogout(ctx.db, logout.handleHash, logout.awaiting, { pending: logout.pending.slice(1), awaiting: id, complete }))) throw raced();
  await endSamlSessions(ctx.db, [next.s.id], now);
  const slo = next.app.saml.slo;
  const xml = logoutRequestXml({
    id, issuer: idpEntityId(ctx.config.issuer), now, destination: slo.url, notOnOrAfter: new Date(now.getTime() + LOGOUT_REQUEST_LIFETIME_MS),
    nameId: { value: next.s.nameId, format: next.s.nameIdFormat, spNameQualifier: next.s.nameIdFormat === 'persistent' || next.s.nameIdFormat === 'transient' ? next.app.samlEntityId! : undefined },
    sessionIndex: next.s.id,
  });
  return await sendMessage(svc, reply, next.app, slo, 'SAMLRequest', xml, undefined);
}

const raced = () => new SamlRefusal('unknown_request', 'the logout moved on in another request');

/** The end of a round: the initiating SP's LogoutResponse, or where the browser was going. */
async function finishRound(svc: SamlService, request: FastifyRequest, reply: FastifyReply, finish: SamlLogoutFinish, complete: boolean): Promise<FastifyReply> {
  const { ctx } = svc;
  if (finish.kind === 'url') return reply.header('cache-control', 'no-store').redirect(finish.url, 303);
  const sp = finish.applicationId ? await findApplication(ctx.db, finish.applicationId) : undefined;
  if (finish.kind === 'page' || !sp?.saml?.slo) {
    const { t } = pageText(ctx.config, request);
    return renderPage(reply.status(200), 'signed-out', { title: t('signedOut.title'), appName: sp?.name }, { brand: pageBrand(sp), here: '/account' });
  }
  const xml = logoutResponseXml({
    id: newMessageId(), issuer: idpEntityId(ctx.config.issuer), now: ctx.clock.now(), destination: sp.saml.slo.url, inResponseTo: finish.inResponseTo, partial: !complete,
  });
  return await sendMessage(svc, reply, sp, sp.saml.slo, 'SAMLResponse', xml, finish.relayState ?? undefined);
}

/** Sends one of our logout messages, signed, in the SP's binding. */
async function sendMessage(
  svc: SamlService,
  reply: FastifyReply,
  sp: Application,
  to: { url: string; binding: Binding },
  param: MessageParam,
  xml: CanonicalXml,
  relayState: string | undefined,
): Promise<FastifyReply> {
  const key = (await svc.keys.current()).signing;
  reply.header('cache-control', 'no-store');
  if (to.binding === 'HTTP-Redirect') {
    const query = redirectQuery(param, xml, relayState, ALG.rsaSha256);
    const url = `${to.url}${to.url.includes('?') ? '&' : '?'}${query}&Signature=${encodeURIComponent(signQuery(query, key))}`;
    return reply.redirect(url, 302);
  }
  const { t } = pageText(svc.ctx.config, reply.request);
  const signed = await signRoot(xml, key);
  return sendPostForm(reply, sp, to.url, { [param]: Buffer.from(signed).toString('base64'), RelayState: relayState }, {
    title: t('saml.logout.title', { app: sp.name }), manual: t('saml.logout.manual'),
  });
}
