/**
 * Spec radius.md ("Operations"): `gatehouse_radius_requests_total{method,result}` (every request
 * answered or dropped after it was read: method pap, eap, eap-ttls, eap-tls, other or accounting;
 * result accept, reject, challenge, answered or dropped), and
 * `gatehouse_radius_dropped_total{reason}` for datagrams dropped before (an unknown client, a
 * malformed packet, a missing or wrong authenticator, over 4,096 octets, busy), duplicates
 * answered from the cache, and `gatehouse_radius_yielded_total`: slices of datagrams put off
 * (held, or paced by YIELD_MS) to leave the CPU to a running password hash (server.ts, decisions
 * 0415, 0416).
 */
import type { AppContext } from '../context.js';

export const RADIUS_REQUESTS = { name: 'gatehouse_radius_requests_total', help: 'RADIUS requests by method and result.', labelNames: ['method', 'result'] } as const;
export const RADIUS_DROPPED = { name: 'gatehouse_radius_dropped_total', help: 'RADIUS datagrams dropped unanswered, by reason.', labelNames: ['reason'] } as const;
export const RADIUS_DUPLICATES = { name: 'gatehouse_radius_duplicates_total', help: 'RADIUS retransmissions answered from the duplicate cache.', labelNames: [] } as const;

export const RADIUS_YIELDED = { name: 'gatehouse_radius_yielded_total', help: 'RADIUS slices put off to leave the CPU to a running password hash.', labelNames: [] } as const;

export type DropReason = 'unknown_client' | 'malformed' | 'oversize' | 'wrong_code' | 'bad_authenticator' | 'busy' | 'error';

export interface RadiusMetrics {
  request(method: string, result: string): void;
  dropped(reason: DropReason): void;
  duplicate(): void;
  yielded(): void;
}

export function radiusMetrics(ctx: Pick<AppContext, 'metrics'>): RadiusMetrics {
  const requests = ctx.metrics.counter(RADIUS_REQUESTS);
  const dropped = ctx.metrics.counter(RADIUS_DROPPED);
  const duplicates = ctx.metrics.counter(RADIUS_DUPLICATES);
  const yielded = ctx.metrics.counter(RADIUS_YIELDED);
  return {
    request: (method, result) => requests.inc({ method, result }),
    dropped: (reason) => dropped.inc({ reason }),
    duplicate: () => duplicates.inc({}),
    yielded: () => yielded.inc({}),
  };
}
