/**
 * RFC 2865 §4.1–4.4 (Access-Request, -Accept, -Reject, -Challenge), §5.2 (PAP), RFC 3579 §2
 * (EAP over RADIUS), RFC 5281 (EAP-TTLS with PAP inside) and RFC 5216 / RFC 9190 (EAP-TLS): what
 * one Access-Request is answered (spec radius.md, "What people authenticate with", "Answers").
 *
 * - PAP (`User-Password`): a name and an app password of the client's application (people.ts).
 * - EAP: the identity response starts a conversation, offered EAP-TTLS first; a Legacy Nak asking
 *   for EAP-TLS gets EAP-TLS; a Nak asking for anything else (PEAP, MSCHAPv2, MD5) ends in an
 *   Access-Reject with EAP-Failure: only TTLS and TLS are offered (RFC 3748 §5.3.1 lets only the
 *   peer Nak, so the server's answer to another method is its failure).
 * - CHAP, MS-CHAP and anything else: refused.
 *
 * Every refusal is the same Access-Reject (with EAP-Failure inside when EAP was spoken), whatever
 * the reason. Failures count against the client's address and the name (limits.ts); past the
 * address's budget nothing is checked; past the name's, the password is still checked (a right one
 * passes) but a wrong one is answered after a delay. An accept carries User-Name, Class (which
 * accounting echoes to name the person), the VLAN's tunnel attributes and, after EAP, the MS-MPPE
 * keys the access point encrypts with.
 */
import { createHash, randomInt, type X509Certificate } from 'node:crypto';
import type { AppContext } from '../context.js';
import type { AuditWriteBehind } from '../audit/write-behind.js';
import { countFailedSignIn } from '../activity/record.js';
import {
  Attr,
  Code,
  MICROSOFT,
  MS_MPPE_RECV_KEY,
  MS_MPPE_SEND_KEY,
  attribute,
  attributesOf,
  mppeKeyValue,
  revealUserPassword,
  split,
  textAttribute,
  vendorSpecific,
  vlanAttributes,
  type Attribute,
  type Packet,
} from './codec.js';
import { EapCode, EapError, EapType, Flag, Outgoing, decodeEap, decodeTlsFragment, encodeEap, encodeTlsFragment, nakTypes, type EapPacket } from './eap.js';
import type { KnownClient } from './clients.js';
import { FailureBudgets } from './limits.js';
import { checkAppPassword, checkCertificate, vlanFor, type Admitted } from './people.js';
import { MAX_AGE_MS, MAX_ROUNDS, type Conversation, type Conversations, type EapMethod } from './session.js';
import { TlsTunnel } from './tls-tunnel.js';
import type { SecureContext } from 'node:tls';
import { decodeAvps, papCredentials } from './ttls-avp.js';

export type Method = 'pap' | 'eap' | 'eap-ttls' | 'eap-tls' | 'other';

/** What the server sends back (undefined attributes: drop the request unanswered). */
export interface Outcome {
  method: Method;
  result: 'accept' | 'reject' | 'challenge' | 'dropped';
  code?: number;
  attributes?: Attribute[];
}

export interface AccessHost {
  ctx: AppContext;
  conversations: Conversations;
  budgets: FailureBudgets;
  /** The EAP server certificate's context (the appliance CA's chain). */
  tlsContext: () => SecureContext;
  /** The appliance CA: what network certificates must be issued by. */
  ca: () => X509Certificate;
  /** `radius.accepted` and `radius.rejected`, written behind (audit/write-behind.ts, decision 0411). */
  audit: AuditWriteBehind;
}

const dropped = (method: Method): Outcome => ({ method, result: 'dropped' });

/** The Class value that names the person in accounting (RFC 2865 §5.25: the client echoes it). */
export const classFor = (personId: string) => Buffer.from(`gatehouse:${personId}`, 'utf8');

export async function access(host: AccessHost, client: KnownClient, address: string, packet: Packet): Promise<Outcome> {
  const eapParts = attributesOf(packet, Attr.eapMessage);
  if (eapParts.length) return eap(host, client, address, packet, Buffer.concat(eapParts));
  const hidden = attribute(packet, Attr.userPassword);
  if (!hidden) return reject('other', undefined);
  const login = textAttribute(packet, Attr.userName) ?? '';
  const password = revealUserPassword(hidden, client.secret, packet.authenticator);
  if (!password) return dropped('pap');
  const admitted = await checkPassword(host, client, address, login, password.toString('utf8'), 'pap');
  if (!admitted) return reject('pap', undefined);
  return accept(host, client, address, 'pap', admitted, undefined);
}

/** A name and an app password, within the budgets. */
async function checkPassword(host: AccessHost, client: KnownClient, address: string, login: string, password: string, method: Method): Promise<Admitted | undefined> {
  const { ctx, budgets } = host;
  const now = ctx.clock.now().getTime();
  if (budgets.addressSpent(address, now)) {
    await refused(host, client, address, method, login, 'budget');
    return undefined;
  }
  const admitted = await checkAppPassword(ctx, client.applicationId, login.trim(), password);
  if (admitted) return admitted;
  const nameSpent = budgets.nameSpent(login, now);
  budgets.failed(address, login, now);
  await refused(host, client, address, method, login, 'credentials');
  if (nameSpent) await budgets.delay();
  return undefined;
}

async function refused(host: AccessHost, client: KnownClient, address: string, method: Method, login: string, why: 'budget' | 'credentials' | 'certificate'): Promise<void> {
  const at = host.ctx.clock.now();
  host.audit.add(at, {
    actor: 'system',
    action: 'radius.rejected',
    applicationId: client.applicationId,
    details: { client: client.name, address, method, userName: login.slice(0, 253), reason: why },
    ip: address,
  });
  if (why !== 'budget') await countFailedSignIn(host.ctx.db, at, client.applicationId);
}

function reject(method: Method, eapId: number | undefined): Outcome {
  return {
    method,
    result: 'reject',
    code: Code.accessReject,
    attributes: eapId === undefined ? [] : split(Attr.eapMessage, encodeEap(EapCode.failure, eapId)),
  };
}

async function accept(host: AccessHost, client: KnownClient, address: string, method: Method, admitted: Admitted, eap: { id: number; msk: Buffer; requestAuthenticator: Buffer } | undefined): Promise<Outcome> {
  const { ctx } = host;
  const vlan = await vlanFor(ctx, client.settings, admitted.personId);
  host.audit.add(ctx.clock.now(), {
    actor: 'system',
    action: 'radius.accepted',
    applicationId: client.applicationId,
    target: admitted.personId,
    details: { client: client.name, address, method, ...(vlan === null ? {} : { vlan }) },
    ip: address,
  });
  const attributes: Attribute[] = [
    { type: Attr.userName, value: Buffer.from(admitted.username, 'utf8') },
    { type: Attr.class, value: classFor(admitted.personId) },
    ...(vlan === null ? [] : vlanAttributes(vlan)),
  ];
  if (eap) {
    attributes.push(...split(Attr.eapMessage, encodeEap(EapCode.success, eap.id)));
    // RFC 2548 §2.4.2–2.4.3 as RFC 5216 §2.3 uses them: Recv-Key the MSK's first 32 octets, Send-Key the next.
    const salt = randomInt(0, 0x7ffe);
    attributes.push({ type: Attr.vendorSpecific, value: vendorSpecific(MICROSOFT, MS_MPPE_RECV_KEY, mppeKeyValue(eap.msk.subarray(0, 32), client.secret, eap.requestAuthenticator, salt)) });
    attributes.push({ type: Attr.vendorSpecific, value: vendorSpecific(MICROSOFT, MS_MPPE_SEND_KEY, mppeKeyValue(eap.msk.subarray(32, 64), client.secret, eap.requestAuthenticator, salt + 1)) });
  }
  return { method, result: 'accept', code: Code.accessAccept, attributes };
}

function challenge(method: Method, conversation: Conversation, eapPacket: Buffer): Outcome {
  return {
    method,
    result: 'challenge',
    code: Code.accessChallenge,
    attributes: [...split(Attr.eapMessage, eapPacket), { type: Attr.state, value: conversation.state }],
  };
}

const methodName = (method: EapMethod | undefined): Method => (method === 'tls' ? 'eap-tls' : method === 'ttls' ? 'eap-ttls' : 'eap');
const typeOf = (method: EapMethod) => (method === 'tls' ? EapType.tls : EapType.ttls);

/** Offers a method: a Start (RFC 5216 §3.1, RFC 5281 §9.2 with version 0). */
function start(host: AccessHost, conversation: Conversation, method: EapMethod): Outcome {
  conversation.method = method;
  conversation.tunnel?.close();
  conversation.tunnel = new TlsTunnel(host.tlsContext(), method === 'tls');
  const id = conversation.nextId();
  return challenge(methodName(method), conversation, encodeEap(EapCode.request, id, typeOf(method), Buffer.from([Flag.start])));
}

async function eap(host: AccessHost, client: KnownClient, address: string, packet: Packet, bytes: Buffer): Promise<Outcome> {
  let message: EapPacket;
  try {
    message = decodeEap(bytes);
  } catch {
    return dropped('eap');
  }
  if (message.code !== EapCode.response) return dropped('eap');
  const state = attribute(packet, Attr.state);
  if (!state) {
    // RFC 3579 §2.1: a conversation starts with the peer's Identity response.
    if (message.type !== EapType.identity) return reject('eap', message.identifier);
    const conversation = host.conversations.start(address, message.data.toString('utf8').slice(0, 253), message.identifier);
    if (!conversation) return dropped('eap');
    return start(host, conversation, 'ttls');
  }
  const conversation = host.conversations.find(state, address);
  if (!conversation) return reject('eap', message.identifier);
  const method = methodName(conversation.method);
  // RFC 3748 §4.1: a response to another request than our last is silently discarded.
  if (message.identifier !== conversation.lastId) return dropped(method);
  conversation.rounds += 1;
  if (conversation.rounds > MAX_ROUNDS || host.ctx.clock.now().getTime() - conversation.startedAt > MAX_AGE_MS) {
    host.conversations.end(conversation);
    return dropped(method);
  }
  const fail = async (why: 'certificate' | 'credentials' | 'protocol'): Promise<Outcome> => {
    host.conversations.end(conversation);
    if (why !== 'credentials') await refused(host, client, address, method, conversation.identity, why === 'certificate' ? 'certificate' : 'credentials');
    return reject(method, message.identifier);
  };
  try {
    if (message.type === EapType.nak) {
      const wanted = nakTypes(message.data);
      if (conversation.method !== 'tls' && wanted.includes(EapType.tls)) return start(host, conversation, 'tls');
      if (conversation.method !== 'ttls' && wanted.includes(EapType.ttls)) return start(host, conversation, 'ttls');
      return await fail('protocol');
    }
    if (!conversation.method || message.type !== typeOf(conversation.method)) return await fail('protocol');
    return await tlsRound(host, client, address, conversation, message, packet.authenticator);
  } catch (error) {
    if (error instanceof EapError) return await fail('protocol');
    throw error;
  }
}

/** One round of a TLS-based method: fragments in, fragments out, and the end. */
async function tlsRound(host: AccessHost, client: KnownClient, address: string, conversation: Conversation, message: EapPacket, requestAuthenticator: Buffer): Promise<Outcome> {
  const method = conversation.method!;
  const name = methodName(method);
  const tunnel = conversation.tunnel!;
  const fragment = decodeTlsFragment(message.data);
  const send = (payload: Buffer) => challenge(name, conversation, encodeEap(EapCode.request, conversation.nextId(), typeOf(method), payload));
  const failed = async (): Promise<Outcome> => {
    host.conversations.end(conversation);
    await refused(host, client, address, name, conversation.identity, method === 'tls' ? 'certificate' : 'credentials');
    return reject(name, message.identifier);
  };

  // Our flight is still going out: the peer acknowledges each fragment with an empty response.
  if (conversation.outgoing?.pending) {
    if (fragment.data.length) throw new EapError('data while our fragments were going out');
    return send(conversation.outgoing.next());
  }
  const whole = conversation.reassembly.add(fragment);
  if (whole === undefined) return send(encodeTlsFragment(0, Buffer.alloc(0)));

  let out: Buffer = Buffer.alloc(0);
  if (whole.length) {
    const fed = await tunnel.feed(whole);
    if (tunnel.failed) return failed();
    out = fed.out;
    if (method === 'ttls' && fed.plain.length) {
      const credentials = papCredentials(decodeAvps(fed.plain));
      if (!credentials) return failed();
      // Before the conversation ends: ending it frees the TLS state the keys come from.
      const msk = tunnel.keys('ttls').msk;
      const admitted = await checkPassword(host, client, address, credentials.login, credentials.password, name);
      host.conversations.end(conversation);
      if (!admitted) return reject(name, message.identifier);
      return accept(host, client, address, name, admitted, { id: message.identifier, msk, requestAuthenticator });
    }
    // RFC 9190 §2.5: after a TLS 1.3 handshake the server commits to no more handshake messages.
    if (method === 'tls' && tunnel.established && tunnel.protocol === 'TLSv1.3' && !conversation.committed) {
      conversation.committed = true;
      out = Buffer.concat([out, await tunnel.send(Buffer.from([0]))]);
    }
  }
  if (out.length) {
    conversation.outgoing = new Outgoing(out);
    return send(conversation.outgoing.next());
  }
  if (!tunnel.established) return failed();
  if (method === 'ttls') return send(encodeTlsFragment(0, Buffer.alloc(0)));
  // EAP-TLS: the peer acknowledged our last flight; the certificate decides.
  const presented = tunnel.peer(host.ca(), host.ctx.clock.now());
  if (!presented) return failed();
  const fingerprint = createHash('sha256').update(presented).digest('hex');
  const admitted = await checkCertificate(host.ctx, client.applicationId, fingerprint);
  if (!admitted) return failed();
  const msk = tunnel.keys('tls').msk;
  host.conversations.end(conversation);
  return accept(host, client, address, name, admitted, { id: message.identifier, msk, requestAuthenticator });
}
