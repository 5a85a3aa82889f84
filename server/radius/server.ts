/**
 * RFC 2865 §3 (UDP, port 1812), RFC 2866 §3 (port 1813), RFC 3579 §3.2 and the BlastRADIUS
 * mitigations (CVE-2024-3596), RFC 5080 §2.2.2 (duplicate detection): the RADIUS listeners (spec
 * radius.md, "Turning it on", "Answers", "Hostile input and limits"). Started and stopped with
 * the server (main.ts) when GATEHOUSE_RADIUS=on.
 *
 * Datagrams are queued as they arrive (past MAX_QUEUED: dropped as busy) and evaluated SLICE at a
 * time, one slice per turn of the event loop (setImmediate), so the HTTP requests that arrive
 * meanwhile are served between slices instead of after every datagram the socket had waiting
 * (decision 0412); while a password hash runs on the pool the next slice waits until it ends (at
 * most HOLD_MAX_MS), so a sign-in's hash has the machine to itself (decisions 0415, 0416).
 * Each datagram, in order:
 * 1. over 4,096 octets, from an address no application's client covers (clients.ts), or not a
 *    well-formed packet (codec.ts): dropped unanswered and counted
 *    (`gatehouse_radius_dropped_total{reason}`);
 * 2. an Access-Request without a valid Message-Authenticator, an Accounting-Request with a wrong
 *    Request Authenticator: dropped;
 * 3. the same client port, identifier and authenticator within DUPLICATE_MS: the answer given
 *    (or being made) is sent again, never a second evaluation;
 * 4. past MAX_IN_FLIGHT requests being evaluated (MAX_IN_FLIGHT_PER_ADDRESS from one address):
 *    dropped (the client retries);
 * 5. answered: access.ts or accounting.ts, counted in `gatehouse_radius_requests_total{method,result}`.
 * An error inside is logged and the request dropped; the listener keeps answering. The audit rows
 * are written behind (audit/write-behind.ts, decision 0411): `stop()` closes the sockets, waits for
 * the requests being evaluated and writes what is left.
 */
import { X509Certificate } from 'node:crypto';
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { isIP } from '../util/ip-family.js';
import type { FastifyBaseLogger } from 'fastify';
import { ConfigError } from '../config.js';
import type { AppContext } from '../context.js';
import { writeMeta } from '../db/meta.js';
import { AuditWriteBehind } from '../audit/write-behind.js';
import { afterHashes, hashRunning } from '../util/hash-pressure.js';
import { access, type AccessHost } from './access.js';
import { accounting } from './accounting.js';
import { ClientDirectory } from './clients.js';
import { Attr, Code, decodePacket, encodeResponse, MAX_PACKET, RadiusCodecError, validAccountingAuthenticator, validMessageAuthenticator, type Packet } from './codec.js';
import { FailureBudgets } from './limits.js';
import { radiusMetrics, type DropReason, type RadiusMetrics } from './metrics.js';
import { Conversations } from './session.js';
import { setRunningRadius, type RadiusListener } from './running.js';
import { RADIUS_STATE_KEY, type RadiusState } from './status.js';
import { tunnelContext, type TunnelMaterial } from './tls-tunnel.js';

export const DUPLICATE_MS = 30_000;
export const MAX_IN_FLIGHT = 512;
export const MAX_IN_FLIGHT_PER_ADDRESS = 256;
/** Datagrams evaluated per turn of the event loop (a PAP authentication is ~0.3 ms of it). */
export const SLICE = 4;
/**
 * While a password hash runs on the pool (util/hash-pressure.ts), the next slice waits until no
 * hash runs, for at most this long (decision 0416): a sign-in's argon2id then has the machine to
 * itself, as when RADIUS is quiet, and a RADIUS request waits at most about one hash.
 */
export const HOLD_MAX_MS = 50;
/**
 * After a hold ran out with a hash still running (hashes back to back), slices wait this long
 * each until the pool is quiet again: a slice is ~0.6 ms, so RADIUS then has about a third of a
 * core and is never held for good (decision 0415).
 */
export const YIELD_MS = 1;
/** Datagrams waiting for their turn; more are dropped as busy (the client retries). */
export const MAX_QUEUED = 1_024;
const MAX_CACHED = 100_000;

export type { RadiusListener } from './running.js';

/**
 * A duplicate-cache entry: while the answer is being made, its promise; then its octets as a
 * one-byte string (undefined: dropped unanswered). At 4,000 PAP requests a second the cache holds
 * 100,000 of these and every one outlives V8's young generation, so they are kept small: a string
 * is one object where a Buffer is three (decision 0413).
 */
interface Cached {
  at: number;
  answer: Promise<Buffer | undefined> | string | undefined;
}

/** The duplicate-cache key: the port, the client, the identifier and the authenticator, one flat string. */
function cacheKey(accountingPort: boolean, address: string, port: number, packet: Packet): string {
  // Built in a Buffer and read once: a string concatenation would be a cons string, flattened
  // into a second one when the Map hashes it.
  const octets = Buffer.allocUnsafe(20 + address.length);
  octets[0] = accountingPort ? 1 : 0;
  octets.writeUInt16BE(port, 1);
  octets[3] = packet.identifier;
  packet.authenticator.copy(octets, 4);
  octets.write(address, 20, 'latin1');
  return octets.toString('latin1');
}

async function bind(socket: Socket, port: number, host: string, variable: string): Promise<number> {
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(port, host, () => {
        socket.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new ConfigError(`${variable} ${port} on ${host} is already in use.`);
    if (code === 'EACCES') throw new ConfigError(`Not allowed to listen on ${variable} ${port}; pick a port above 1023.`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new ConfigError(`Cannot listen on GATEHOUSE_RADIUS_HOST ${host}: no such address on this machine.`);
    throw error;
  }
  return socket.address().port;
}

const shown = (host: string, port: number) => {
  const h = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `${h.includes(':') ? `[${h}]` : h}:${port}`;
};

/** Starts the listeners; `material` is the EAP server certificate (the appliance CA's). */
export async function startRadius(ctx: AppContext, log: FastifyBaseLogger, material: TunnelMaterial): Promise<RadiusListener> {
  const config = ctx.config.radius;
  const metrics: RadiusMetrics = radiusMetrics(ctx);
  const directory = new ClientDirectory(ctx.db);
  await directory.reload();
  let context = tunnelContext(material);
  let ca = new X509Certificate(material.ca);
  const conversations = new Conversations(() => ctx.clock.now().getTime());
  const audit = new AuditWriteBehind(ctx.db, log);
  const host: AccessHost = { ctx, conversations, budgets: new FailureBudgets(), tlsContext: () => context, ca: () => ca, audit };
  const cache = new Map<string, Cached>();
  const inFlight = new Map<string, number>();
  const evaluating = new Set<Promise<unknown>>();
  let flying = 0;

  const family = isIP(config.host) === 6 || config.host === '::' ? 'udp6' : 'udp4';
  const authSocket = createSocket({ type: family, reuseAddr: false });
  const acctSocket = createSocket({ type: family, reuseAddr: false });

  const drop = (reason: DropReason) => metrics.dropped(reason);

  const prune = (now: number) => {
    for (const [key, entry] of cache) {
      if (now - entry.at <= DUPLICATE_MS && cache.size <= MAX_CACHED) break;
      cache.delete(key);
    }
  };

  const evaluate = (socket: Socket, accountingPort: boolean, datagram: Buffer, peer: RemoteInfo) => {
    if (datagram.length > MAX_PACKET) return drop('oversize');
    const address = peer.address.startsWith('::ffff:') ? peer.address.slice(7) : peer.address;
    const client = directory.current().find(address);
    if (!client) return drop('unknown_client');
    let packet: Packet;
    try {
      packet = decodePacket(datagram);
    } catch (error) {
      if (error instanceof RadiusCodecError) return drop('malformed');
      throw error;
    }
    if (accountingPort) {
      if (packet.code !== Code.accountingRequest) return drop('wrong_code');
      if (!validAccountingAuthenticator(packet, client.secret)) return drop('bad_authenticator');
    } else {
      if (packet.code !== Code.accessRequest) return drop('wrong_code');
      // BlastRADIUS: every Access-Request must carry a valid Message-Authenticator.
      if (!validMessageAuthenticator(packet, client.secret)) return drop('bad_authenticator');
    }
    const now = Date.now();
    const key = cacheKey(accountingPort, address, peer.port, packet);
    const cached = cache.get(key);
    if (cached && now - cached.at <= DUPLICATE_MS) {
      metrics.duplicate();
      const sent = cached.answer;
      if (typeof sent === 'string') socket.send(Buffer.from(sent, 'latin1'), peer.port, peer.address);
      else void sent?.then((answer) => answer && socket.send(answer, peer.port, peer.address));
      return;
    }
    const mine = inFlight.get(address) ?? 0;
    if (flying >= MAX_IN_FLIGHT || mine >= MAX_IN_FLIGHT_PER_ADDRESS) return drop('busy');
    flying += 1;
    inFlight.set(address, mine + 1);
    const answer = (async (): Promise<Buffer | undefined> => {
      const proxyStates = packet.attributes.filter((a) => a.type === Attr.proxyState);
      if (accountingPort) {
        await accounting(ctx, client, address, packet);
        metrics.request('accounting', 'answered');
        return encodeResponse(Code.accountingResponse, packet, proxyStates, client.secret);
      }
      const outcome = await access(host, client, address, packet);
      metrics.request(outcome.method, outcome.result);
      if (outcome.code === undefined) return undefined;
      return encodeResponse(outcome.code, packet, [...(outcome.attributes ?? []), ...proxyStates], client.secret);
    })()
      .catch((error: unknown) => {
        log.error({ err: error, client: client.name, address }, 'RADIUS request failed');
        drop('error');
        return undefined;
      })
      .finally(() => {
        flying -= 1;
        const left = (inFlight.get(address) ?? 1) - 1;
        if (left > 0) inFlight.set(address, left);
        else inFlight.delete(address);
      });
    prune(now);
    const entry: Cached = { at: now, answer };
    cache.set(key, entry);
    evaluating.add(answer);
    void answer.then((bytes) => {
      evaluating.delete(answer);
      entry.answer = bytes?.toString('latin1');
      if (bytes) socket.send(bytes, peer.port, peer.address);
    });
  };

  // The queue: a slice per turn of the event loop (the microtasks each evaluation queues run
  // before the next turn; on SQLite a PAP authentication finishes within them).
  const queue: { socket: Socket; accountingPort: boolean; datagram: Buffer; peer: RemoteInfo }[] = [];
  // The next slice: at the next turn; while a password hash runs, once no hash runs (at most
  // HOLD_MAX_MS later), and past that every YIELD_MS until the pool is quiet (decisions 0415, 0416).
  let scheduled = false;
  let holdRanOut = false;
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    if (!hashRunning()) {
      holdRanOut = false;
      setImmediate(pump);
      return;
    }
    metrics.yielded();
    if (holdRanOut) {
      setTimeout(pump, YIELD_MS);
      return;
    }
    let held = true;
    const release = (ranOut: boolean) => {
      if (!held) return;
      held = false;
      clearTimeout(timer);
      holdRanOut = ranOut;
      pump();
    };
    const timer = setTimeout(() => release(true), HOLD_MAX_MS);
    afterHashes(() => release(false));
  };
  const pump = () => {
    scheduled = false;
    for (let n = 0; n < SLICE && queue.length; n++) {
      const next = queue.shift()!;
      try {
        evaluate(next.socket, next.accountingPort, next.datagram, next.peer);
      } catch (error) {
        log.error({ err: error }, 'RADIUS datagram failed');
        drop('error');
      }
    }
    if (queue.length) schedule();
  };
  const handle = (socket: Socket, accountingPort: boolean) => (datagram: Buffer, peer: RemoteInfo) => {
    if (queue.length >= MAX_QUEUED) return drop('busy');
    queue.push({ socket, accountingPort, datagram, peer });
    schedule();
  };

  for (const socket of [authSocket, acctSocket]) socket.on('error', (error) => log.error({ err: error }, 'RADIUS socket error'));
  authSocket.on('message', handle(authSocket, false));
  acctSocket.on('message', handle(acctSocket, true));
  let authPort: number;
  let acctPort: number;
  try {
    authPort = await bind(authSocket, config.port, config.host, 'GATEHOUSE_RADIUS_PORT');
    try {
      acctPort = await bind(acctSocket, config.acctPort, config.host, 'GATEHOUSE_RADIUS_ACCT_PORT');
    } catch (error) {
      authSocket.close();
      throw error;
    }
  } catch (error) {
    await audit.close();
    throw error;
  }
  const state: RadiusState = { enabled: true, auth: shown(config.host, authPort), accounting: shown(config.host, acctPort) };
  await writeMeta(ctx.db, RADIUS_STATE_KEY, state, ctx.clock.now());
  log.info({ radius: state.auth, accounting: state.accounting }, 'RADIUS listening');

  const listener: RadiusListener = {
    state: () => ({ ...state, conversations: conversations.size }),
    reloadClients: () => directory.reload(),
    setTls(next) {
      context = tunnelContext(next);
      ca = new X509Certificate(next.ca);
    },
    flushAudit: () => audit.flush(),
    async stop() {
      setRunningRadius(ctx, undefined, listener);
      await Promise.all([authSocket, acctSocket].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
      queue.length = 0;
      await Promise.allSettled([...evaluating]);
      conversations.stop();
      await audit.close();
    },
  };
  setRunningRadius(ctx, listener);
  return listener;
}
