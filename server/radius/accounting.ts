/**
 * RFC 2866 §4 (Accounting-Request and -Response) and §5 (Acct-Status-Type, Acct-Session-Id and
 * the counters): accounting is answered and kept as sessions on the person's page for 30 days
 * (spec radius.md, "Answers"; the retention rule removes older ones). The person is the one the
 * Access-Accept's Class named (access.ts `classFor`); a report without one (Accounting-On/Off, a
 * session we did not admit) is answered and not kept.
 */
import type { AppContext } from '../context.js';
import { newId } from '../util/ids.js';
import { Attr, attribute, integerAttribute, textAttribute, type Packet } from './codec.js';
import type { KnownClient } from './clients.js';
import { findSession, insertSession, updateSession } from './queries.js';

const STATUS = { start: 1, stop: 2, interim: 3 } as const;
const CLASS_PREFIX = 'gatehouse:';

export async function accounting(ctx: AppContext, client: KnownClient, address: string, packet: Packet): Promise<void> {
  const status = integerAttribute(packet, Attr.acctStatusType);
  const sessionId = textAttribute(packet, Attr.acctSessionId);
  const classText = attribute(packet, Attr.class)?.toString('utf8');
  if (!status || !sessionId || !classText?.startsWith(CLASS_PREFIX)) return;
  if (status !== STATUS.start && status !== STATUS.stop && status !== STATUS.interim) return;
  const personId = classText.slice(CLASS_PREFIX.length);
  if (!/^usr_[A-Za-z0-9_-]{1,64}$/.test(personId)) return;
  const now = ctx.clock.now();
  const key = { applicationId: client.applicationId, nasAddress: address, acctSessionId: sessionId };
  const counters = {
    inputOctets: integerAttribute(packet, Attr.acctInputOctets) ?? 0,
    outputOctets: integerAttribute(packet, Attr.acctOutputOctets) ?? 0,
    sessionSeconds: integerAttribute(packet, Attr.acctSessionTime) ?? 0,
  };
  const existing = await findSession(ctx.db, key);
  if (existing) {
    if (existing.personId !== personId) return;
    await updateSession(ctx.db, existing.id, { ...counters, updatedAt: now, ...(status === STATUS.stop ? { stoppedAt: now } : {}) });
    return;
  }
  try {
    await insertSession(ctx.db, {
      id: newId('ras'),
      personId,
      ...key,
      clientName: client.name,
      callingStationId: textAttribute(packet, Attr.callingStationId)?.slice(0, 64) ?? null,
      startedAt: new Date(now.getTime() - counters.sessionSeconds * 1000),
      updatedAt: now,
      stoppedAt: status === STATUS.stop ? now : null,
      ...counters,
    });
  } catch {
    // A Class naming nobody (the person deleted since): answered, not kept.
  }
}
