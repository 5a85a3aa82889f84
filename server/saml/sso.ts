/**
 * Single sign-on (SAML 2.0 Profiles §4.1 Web Browser SSO; spec saml.md, "Single sign-on"):
 *
 * 1. An AuthnRequest arrives (HTTP-Redirect or HTTP-POST at `/saml/sso`): read (xml.ts,
 *    messages.ts); its Issuer must be a registered SP; its signature is verified with the SP's
 *    certificates (the query's `SigAlg`/`Signature`, or the enveloped one), and required when the SP
 *    has `wantAuthnRequestsSigned`; a signed one must name our SSO URL as `Destination` (Bindings
 *    §3.4.5.2, §3.5.5.2), an unsigned one may. The ACS is exactly one of the SP's URLs, or the one
 *    its index names, or the default; never an unregistered one. Until here a refusal is our
 *    hosted page (never a redirect or a POST to where the request said), audited `saml.refused`.
 * 2. Its ID is recorded for the SP (a second time is a replay, refused), with what it asked:
 *    ForceAuthn, IsPassive, the NameID format, a second factor (RequestedAuthnContext). From here
 *    on the answers go to the ACS, and the sign-in may go through the hosted pages, which come back
 *    to `/saml/sso/continue?r=<handle>`. A request answered at once is recorded with its answer,
 *    in the answer's transaction (one write; decision 0433): its ID is looked up first, so a replay
 *    is still refused before anything else, and the insert refuses one that raced it.
 * 3. The person is admitted exactly as for OIDC (oauth/authorize/admission.ts `admit`: the
 *    application's realm, its sign-up policy and membership, second factor with step-up); then the
 *    consent page when the application asks explicit consent (SAML_SCOPE: what the attributes tell).
 *    ForceAuthn wants a sign-in at or after the request; IsPassive answers `NoPassive` wherever a
 *    page would be needed. A person the application refuses sees the refusal page, whose way back
 *    posts a `RequestDenied` Response to the ACS.
 * 4. The Response: signed as the SP asks (Assertion, Response, both), posted to the ACS by the
 *    auto-submitting form (pages.ts). Its SAML session is recorded for single logout, the member
 *    marked active, `saml.sign_in` audited.
 * IdP-initiated sign-on (`/saml/sso/init?app=<id>`, only with `idpInitiated`) starts at step 2
 * with no request ID (so no InResponseTo) and the default ACS.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import type { Application, Membership, Person, SamlNameIdFormat, Session } from '../db/schema.js';
import { admit } from '../oauth/authorize/admission.js';
import { CONSENT_PAGE, consentNeeded } from '../oauth/consent.js';
import { refusedPage } from '../oauth/refused-page.js';
import { redirectToStepUp } from '../accounts/second-factor/flow.js';
import { isMultiFactor } from '../accounts/second-factor/factors.js';
import { flowQuery } from '../pages/sign-in-pages.js';
import { recordAudit } from '../audit/record.js';
import { activeMarkDue, touchMembership } from '../members/create.js';
import { transaction } from '../db/store.js';
import { sha256 } from '../util/crypto.js';
import { attributesFor } from './attributes.js';
import { BINDING_URNS, type Carried } from './bindings.js';
import { assertionXml, AUTHN_CONTEXT, NAME_ID_FORMATS, nameIdFormatOfUrn, newMessageId, responseXml } from './builder.js';
import { readAuthnRequest, STATUS, type AuthnRequest } from './messages.js';
import {
  answerRequest, findApplication, findSpByEntityId, pendingRequest, persistentNameId, recordAnsweredRequest, recordRequest, requestSeen, upsertSamlSession, type NewRequest,
} from './queries.js';
import { fromSp, SamlRefusal } from './refusal.js';
import { certificateKeys, envelopedSignature, signResponse, signRoot, verifyEnveloped, verifyQuerySignature } from './signature.js';
import type { SamlKeyRing } from './keys.js';
import { sendPostForm } from './pages.js';
import { parseXml } from './xml.js';

import { CONTINUE_PATH, idpEntityId, SAML_SCOPE, SSO_PATH } from './paths.js';


/** How long a request waits for its sign-in (and its ID is remembered for replays). */
export const REQUEST_TTL_MS = 30 * 60_000;
/** An assertion's bearer confirmation and conditions: five minutes (spec: NotOnOrAfter ≤ 5 minutes). */
export const ASSERTION_LIFETIME_MS = 5 * 60_000;
/** NotBefore is set this much back, for SPs whose clock is a little behind ours. */
export const NOT_BEFORE_SKEW_MS = 30_000;

export type SamlResult = 'success' | 'no_passive' | 'denied' | 'refused';

/** What the SSO and SLO services share: the app context, the IdP's keys, and the metric. */
export interface SamlService {
  ctx: AppContext;
  keys: SamlKeyRing;
  /** `gatehouse_saml_responses_total{result}`. */
  count(result: SamlResult): void;
}

export const continuePath = (handle: string) => `${CONTINUE_PATH}?${new URLSearchParams({ r: handle }).toString()}`;

/** Class references that a password satisfies, and those that ask for a second factor. */
const PASSWORD_CLASSES = new Set([
  AUTHN_CONTEXT.password, 'urn:oasis:names:tc:SAML:2.0:ac:classes:Password', 'urn:oasis:names:tc:SAML:2.0:ac:classes:unspecified',
]);
const MFA_CLASSES = new Set<string>([AUTHN_CONTEXT.mfa, AUTHN_CONTEXT.refedsMfa]);

/**
 * What RequestedAuthnContext asks (Core §3.3.2.2.1): the MFA class to answer with when a second
 * factor is wanted, `false` when a password is enough, or `undefined` when nothing we do satisfies it.
 */
function requestedContext(req: AuthnRequest): string | false | undefined {
  if (!req.requestedContexts.length) return false;
  const mfa = req.requestedContexts.find((c) => MFA_CLASSES.has(c));
  const password = req.requestedContexts.some((c) => PASSWORD_CLASSES.has(c));
  if (req.comparison === 'exact') return mfa ?? (password ? false : undefined);
  if (req.comparison === 'minimum') return password ? false : mfa;
  // `better`: stronger than one listed; `maximum`: at most one listed (a password is weaker than all we know).
  if (req.comparison === 'better') return password ? AUTHN_CONTEXT.mfa : undefined;
  return password || mfa ? false : undefined;
}

/**
 * Checks the signature of an SP's message; true when it was signed. HTTP-Redirect carries it in the
 * query (Bindings §3.4.4.1); a signature inside the XML as well (pysaml2 sends both) is then covered
 * by the query's, which is verified. Otherwise an enveloped signature is verified (HTTP-POST, or a
 * Redirect message signed only inside).
 */
export function checkMessageSignature(sp: Application, carried: Carried, doc: Document): boolean {
  const certificates = sp.saml!.spCertificates;
  if (carried.querySignature) {
    verifyQuerySignature(carried.querySignature, certificateKeys(certificates));
    return true;
  }
  const enveloped = envelopedSignature(doc);
  if (enveloped) verifyEnveloped(carried.xml, doc, enveloped, certificates);
  return !!enveloped;
}

/** Checks the signature of an AuthnRequest (step 1): required when the SP wants its requests signed. */
function checkRequestSignature(sp: Application, carried: Carried, doc: Document): boolean {
  const signed = checkMessageSignature(sp, carried, doc);
  if (!signed && sp.saml!.wantAuthnRequestsSigned) throw new SamlRefusal('unsigned', 'the SP requires signed requests and this one is not signed');
  return signed;
}

/** The ACS the Response goes to (step 1): exactly a registered one, or the default. */
function resolveAcs(sp: Application, req: AuthnRequest): string {
  const { acs } = sp.saml!;
  if (req.protocolBinding !== undefined && req.protocolBinding !== BINDING_URNS['HTTP-POST']) {
    throw new SamlRefusal('bad_acs', 'the request asks for a response binding other than HTTP-POST');
  }
  if (req.acsUrl !== undefined) {
    const found = acs.find((a) => a.url === req.acsUrl);
    if (!found) throw new SamlRefusal('bad_acs', 'the request names an ACS URL the SP has not registered');
    return found.url;
  }
  if (req.acsIndex !== undefined) {
    const found = acs.find((a) => a.index === req.acsIndex);
    if (!found) throw new SamlRefusal('bad_acs', 'the request names an ACS index the SP has not registered');
    return found.url;
  }
  return acs[0]!.url;
}

/** Reads and checks an AuthnRequest (step 1), records it (step 2) and goes on (step 3). */
export async function receiveAuthnRequest(svc: SamlService, request: FastifyRequest, reply: FastifyReply, carried: Carried): Promise<FastifyReply> {
  const { ctx } = svc;
  const now = ctx.clock.now();
  const doc = parseXml(carried.xml);
  const req = readAuthnRequest(doc, now);
  const sp = await findSpByEntityId(ctx.db, req.issuer);
  if (!sp?.saml) throw new SamlRefusal('unknown_sp', 'the Issuer is not a registered service provider');
  return await fromSp(sp, () => checkedRequest(svc, request, reply, carried, doc, req, sp));
}

async function checkedRequest(svc: SamlService, request: FastifyRequest, reply: FastifyReply, carried: Carried, doc: Document, req: AuthnRequest, sp: Application): Promise<FastifyReply> {
  const { ctx } = svc;
  const now = ctx.clock.now();
  const signed = checkRequestSignature(sp, carried, doc);
  const ssoUrl = `${ctx.config.issuer}${SSO_PATH}`;
  if (req.destination !== undefined ? req.destination !== ssoUrl : signed) {
    throw new SamlRefusal('bad_destination', 'the request\'s Destination is not this identity provider\'s SSO URL');
  }
  const acsUrl = resolveAcs(sp, req);
  const base = { sp, acsUrl, inResponseTo: req.id, relayState: carried.relayState };

  // The SP is known and the ACS its own: from here on, what cannot be granted is answered there.
  const wanted = requestedContext(req);
  const asked = req.nameIdFormat === undefined || req.nameIdFormat === NAME_ID_FORMATS.unspecified ? null : nameIdFormatOfUrn(req.nameIdFormat);
  const row = {
    applicationId: sp.id, requestId: req.id, acsUrl, relayState: carried.relayState ?? null, forceAuthn: req.forceAuthn, isPassive: req.isPassive,
    mfaClass: wanted || null, nameIdFormat: asked ?? null, createdAt: now, expiresAt: new Date(now.getTime() + REQUEST_TTL_MS),
  };
  const pending: InFlight = { ...row, handle: undefined };
  if (wanted === undefined) return await sendError(svc, reply, base, { code: STATUS.requester, second: STATUS.noAuthnContext }, pending);
  if (asked === undefined) return await sendError(svc, reply, base, { code: STATUS.requester, second: STATUS.invalidNameIdPolicy }, pending);
  if (await requestSeen(ctx.db, sp.id, req.id)) throw replay();
  return await proceed(svc, request, reply, sp, pending);
}

/** `/saml/sso/continue?r=<handle>`: the hosted pages are done; the request goes on from step 3. */
export async function continueRequest(svc: SamlService, request: FastifyRequest, reply: FastifyReply, handle: string | undefined): Promise<FastifyReply> {
  const pending = handle ? await pendingRequest(svc.ctx.db, handle, svc.ctx.clock.now()) : undefined;
  const sp = pending && (await findApplication(svc.ctx.db, pending.applicationId));
  if (!pending || !sp?.saml) throw new SamlRefusal('unknown_request', 'the sign-on request is unknown, answered already, or too old');
  const { handleHash: _hash, answeredAt: _answered, ...row } = pending;
  return await fromSp(sp, () => proceed(svc, request, reply, sp, { ...row, handle: handle! }));
}

/** `/saml/sso/init?app=<id>`: IdP-initiated sign-on to an SP that allows it. */
export async function initiate(svc: SamlService, request: FastifyRequest, reply: FastifyReply, appId: string | undefined, relayState: string | undefined): Promise<FastifyReply> {
  const { ctx } = svc;
  const sp = appId ? await findApplication(ctx.db, appId) : undefined;
  if (!sp?.saml) throw new SamlRefusal('unknown_sp', 'the application is not a SAML service provider');
  if (!sp.saml.idpInitiated) throw Object.assign(new SamlRefusal('idp_initiated_off', 'the application does not allow IdP-initiated sign-on'), { app: sp });
  const now = ctx.clock.now();
  const row = {
    applicationId: sp.id, requestId: null, acsUrl: sp.saml.acs[0]!.url, relayState: relayState ?? null, forceAuthn: false, isPassive: false,
    mfaClass: null, nameIdFormat: null, createdAt: now, expiresAt: new Date(now.getTime() + REQUEST_TTL_MS),
  };
  return await proceed(svc, request, reply, sp, { ...row, handle: undefined });
}

/**
 * A request on its way (step 2): what is recorded of it, and its handle once it is recorded. One
 * answered at once is recorded with its answer (`sendAssertion`); one that a page comes before is
 * recorded then (`recorded`), so the page can come back to it.
 */
interface InFlight extends NewRequest {
  handle: string | undefined;
}

const replay = () => new SamlRefusal('replay', 'this request ID was used before');

/** Records the request (not answered yet) unless it is; its handle. A replay is refused. */
async function recorded(ctx: AppContext, pending: InFlight): Promise<string> {
  if (pending.handle !== undefined) return pending.handle;
  const { handle: _none, ...row } = pending;
  const handle = await recordRequest(ctx.db, row);
  if (!handle) throw replay();
  pending.handle = handle;
  return handle;
}

const noStore = (reply: FastifyReply, to: string) => reply.header('cache-control', 'no-store').redirect(to, 302);

/** Step 3: admission, then the Response (step 4) or the page that comes first. */
async function proceed(svc: SamlService, request: FastifyRequest, reply: FastifyReply, sp: Application, pending: InFlight): Promise<FastifyReply> {
  const { ctx } = svc;
  const resume = async () => continuePath(await recorded(ctx, pending));
  const base = { sp, acsUrl: pending.acsUrl, inResponseTo: pending.requestId ?? undefined, relayState: pending.relayState ?? undefined };
  const fresh = pending.forceAuthn ? (authTime: Date) => authTime.getTime() >= pending.createdAt.getTime() : undefined;
  const admission = await admit(ctx, request, sp, fresh, pending.mfaClass !== null);
  const passive = pending.isPassive;
  if (admission.kind === 'sign_in') {
    if (passive) return await sendError(svc, reply, base, { code: STATUS.responder, second: STATUS.noPassive }, pending);
    return noStore(reply, `/sign-in?${flowQuery(sp, await resume())}`);
  }
  if (admission.kind === 'second_factor') {
    if (passive) return await sendError(svc, reply, base, { code: STATUS.responder, second: STATUS.noPassive }, pending);
    return redirectToStepUp(ctx, request, reply, admission, sp, await resume());
  }
  if (admission.kind === 'denied') {
    const status = { code: STATUS.responder, second: STATUS.requestDenied };
    if (passive) return await sendError(svc, reply, base, status, pending);
    const back = await resume();
    const { params } = await errorResponse(svc, base, status);
    svc.count('denied');
    return refusedPage(ctx, request, reply, sp, admission, { mode: 'form_post', redirectUri: pending.acsUrl, params }, `/sign-in?${flowQuery(sp, back, { switch: '1' })}`);
  }
  if (await consentNeeded(ctx, sp, admission.membership, SAML_SCOPE, false)) {
    if (passive) return await sendError(svc, reply, base, { code: STATUS.responder, second: STATUS.noPassive }, pending);
    return noStore(reply, `${CONSENT_PAGE}?${new URLSearchParams({ return_to: await resume() }).toString()}`);
  }
  return await sendAssertion(svc, reply, sp, pending, admission);
}

interface Answer {
  sp: Application;
  acsUrl: string;
  inResponseTo: string | undefined;
  relayState: string | undefined;
}

/** A signed Response with an error status, as the form's parameters. */
async function errorResponse(svc: SamlService, to: Answer, status: { code: string; second?: string }) {
  const { ctx } = svc;
  const key = (await svc.keys.current()).signing;
  const xml = await signRoot(responseXml({
    id: newMessageId(), issuer: idpEntityId(ctx.config.issuer), now: ctx.clock.now(), destination: to.acsUrl, inResponseTo: to.inResponseTo, status, assertion: undefined,
  }), key);
  return { params: { SAMLResponse: Buffer.from(xml).toString('base64'), RelayState: to.relayState } };
}

/** Posts an error Response to the ACS; a pending request is answered by it. */
async function sendError(svc: SamlService, reply: FastifyReply, to: Answer, status: { code: string; second?: string }, pending?: InFlight): Promise<FastifyReply> {
  if (pending) await answerRequest(svc.ctx.db, sha256(await recorded(svc.ctx, pending)), svc.ctx.clock.now());
  const { params } = await errorResponse(svc, to, status);
  svc.count(status.second === STATUS.noPassive ? 'no_passive' : status.second === STATUS.requestDenied ? 'denied' : 'refused');
  return sendPostForm(reply, to.sp, to.acsUrl, params);
}

/** The NameID the SP gets for this person (spec saml.md, "Per application"). */
async function nameIdFor(svc: SamlService, sp: Application, person: Person, format: SamlNameIdFormat, now: Date): Promise<string> {
  switch (format) {
    case 'persistent':
      return await persistentNameId(svc.ctx.db, sp.id, person.id, now);
    case 'emailAddress':
      return person.email;
    case 'unspecified':
      return sp.saml!.nameId.source === 'email' ? person.email : person.username;
    case 'transient':
      return newMessageId();
  }
}

/** Step 4: the assertion, recorded and posted. */
async function sendAssertion(
  svc: SamlService,
  reply: FastifyReply,
  sp: Application,
  pending: InFlight,
  admitted: { session: Session; person: Person; authTime: Date; membership: Membership },
): Promise<FastifyReply> {
  const { ctx } = svc;
  const { session, person, membership, authTime } = admitted;
  const now = ctx.clock.now();
  const saml = sp.saml!;
  const format = pending.nameIdFormat ?? saml.nameId.format;
  const nameIdValue = await nameIdFor(svc, sp, person, format, now);
  const sessionIndex = await transaction(ctx.db, async (tx) => {
    if (pending.handle === undefined) {
      const { handle: _none, ...row } = pending;
      if (!(await recordAnsweredRequest(tx, row, now))) throw replay();
    } else if (!(await answerRequest(tx, sha256(pending.handle), now))) {
      throw new SamlRefusal('unknown_request', 'the sign-on request was answered already');
    }
    const index = await upsertSamlSession(tx, { sessionId: session.id, applicationId: sp.id, personId: person.id, nameId: nameIdValue, nameIdFormat: format }, now);
    if (activeMarkDue(membership.lastActiveAt, now)) await touchMembership(tx, membership.id, now);
    await recordAudit(tx, now, {
      actor: `person:${person.id}`, action: 'saml.sign_in', applicationId: sp.id, target: membership.id,
      details: { sessionId: session.id, nameIdFormat: format, idpInitiated: pending.requestId === null },
    });
    return index;
  });
  const attributes = await attributesFor(ctx, sp, person, membership);
  const issuer = idpEntityId(ctx.config.issuer);
  const entityId = sp.samlEntityId!;
  const key = (await svc.keys.current()).signing;
  const mfa = isMultiFactor(session.amr);
  const assertion = assertionXml({
    id: newMessageId(), issuer, now,
    nameId: { value: nameIdValue, format, spNameQualifier: format === 'persistent' || format === 'transient' ? entityId : undefined },
    recipient: pending.acsUrl, inResponseTo: pending.requestId ?? undefined, audience: entityId,
    authnInstant: authTime, sessionIndex, sessionNotOnOrAfter: session.expiresAt,
    authnContext: mfa ? (pending.mfaClass ?? AUTHN_CONTEXT.mfa) : AUTHN_CONTEXT.password,
    attributes, lifetimeMs: ASSERTION_LIFETIME_MS, notBeforeSkewMs: NOT_BEFORE_SKEW_MS,
  });
  // Both signatures from the text our builder wrote (signature.ts signResponse, decisions 0434, 0435).
  const response = await signResponse(responseXml({
    id: newMessageId(), issuer, now, destination: pending.acsUrl, inResponseTo: pending.requestId ?? undefined, status: { code: STATUS.success }, assertion,
  }), key, { assertion: saml.signAssertion, response: saml.signResponse });
  svc.count('success');
  return sendPostForm(reply, sp, pending.acsUrl, { SAMLResponse: Buffer.from(response).toString('base64'), RelayState: pending.relayState ?? undefined });
}
