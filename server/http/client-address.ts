/**
 * The client address of the request being answered, for what is recorded about it (the audit
 * log's `ip`) far below the route, without passing the request through every service: an
 * AsyncLocalStorage scope opened for each request, by a Fastify hook (app.ts) and by the answers
 * before Fastify (early-answers.ts). Background work (the sweeper, schedules) runs outside any
 * request: no address.
 *
 * The address is the one GATEHOUSE_TRUST_PROXY makes it: the connection's peer, or, for a request
 * from a trusted proxy, the client its X-Forwarded-For names (Fastify's `request.ip`, and the same
 * rule, @fastify/proxy-addr, for the answers before Fastify).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';

const current = new AsyncLocalStorage<string>();

/** Runs `fn` as part of the request from `ip`. */
export function withClientAddress<T>(ip: string, fn: () => T): T {
  return current.run(ip, fn);
}

/** The address of the request being answered; undefined outside a request. */
export function clientAddress(): string | undefined {
  return current.getStore();
}

/** How a raw request's client address is found under GATEHOUSE_TRUST_PROXY (empty: the peer's). */
export function clientAddressOf(trustProxy: string[]): (request: IncomingMessage) => string {
  if (trustProxy.length === 0) return (request) => request.socket.remoteAddress ?? '';
  const trusted = proxyAddr.compile(trustProxy);
  return (request) => proxyAddr(request, trusted);
}
