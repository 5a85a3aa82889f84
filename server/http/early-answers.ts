/**
 * Answers given by the Node server before Fastify sees the request (issue 9: JWKS and discovery
 * at ≥ 15,000 requests/s on two cores). Every relying party and verifier fetches these two
 * documents; they take no input, read no cookie and are the same for every caller, so routing,
 * hooks and the reply object (about 40 % of their cost through Fastify) buy nothing there.
 *
 * Only `GET`/`HEAD` of the exact registered path are answered here, with the route's own headers
 * plus the ones the global hooks add (security headers, CORS). Anything else — a query string,
 * another method, a preflight — goes to Fastify, whose route for the same path answers the same
 * (the tests compare both, and `inject` only ever reaches Fastify's).
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { FastifyServerFactory } from 'fastify';
import type { serverLimits } from './server-limits.js';

interface EarlyAnswer {
  headers: Record<string, string>;
  body: () => string;
  /** The last body and its bytes, so an unchanged document is not re-encoded per request. */
  lastBody: string;
  lastBytes: Buffer;
}

export class EarlyAnswers {
  private readonly answers = new Map<string, EarlyAnswer>();

  /** `serverHeaders`: what every answer of this server carries on top of a route's own (HSTS under TLS). */
  constructor(private readonly serverHeaders: Record<string, string> = {}) {}

  /** Serve `GET`/`HEAD` of exactly `path` with status 200, these headers and `body()`'s JSON. */
  add(path: string, headers: Record<string, string>, body: () => string): void {
    this.answers.set(path, { headers, body, lastBody: '', lastBytes: Buffer.alloc(0) });
  }

  /** Answers the request if it is one of ours; false hands it to Fastify. */
  answer(request: IncomingMessage, response: ServerResponse): boolean {
    const method = request.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const answer = this.answers.get(request.url!);
    if (!answer) return false;
    let body: string;
    try {
      body = answer.body();
    } catch {
      // Fastify's route reads the same body and turns the failure into the documented error.
      return false;
    }
    if (body !== answer.lastBody) {
      answer.lastBody = body;
      answer.lastBytes = Buffer.from(body);
    }
    response.writeHead(200, { ...answer.headers, ...this.serverHeaders, 'content-length': answer.lastBytes.length });
    response.end(method === 'HEAD' ? undefined : answer.lastBytes);
    return true;
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    earlyAnswers: EarlyAnswers;
  }
}

/**
 * The Node server Fastify runs on: HTTP, or HTTPS with `tls`, with the connection limits of
 * `serverLimits` (Fastify applies its timeout options only to servers it creates itself, so they
 * are set here), asking `early` before handing a request to Fastify.
 */
export function nodeServerFactory(
  limits: ReturnType<typeof serverLimits>,
  tls: { key: string; cert: string } | undefined,
  early: EarlyAnswers,
): FastifyServerFactory {
  return (handler) => {
    const listener = (request: IncomingMessage, response: ServerResponse) => {
      if (!early.answer(request, response)) handler(request, response);
    };
    // An https.Server is what Fastify itself would create here; its request type is http's.
    const server = (tls ? createHttpsServer({ ...limits.node, ...tls }, listener) : createHttpServer(limits.node, listener)) as Server;
    server.keepAliveTimeout = limits.fastify.keepAliveTimeout;
    server.requestTimeout = limits.fastify.requestTimeout;
    server.setTimeout(limits.fastify.connectionTimeout);
    return server;
  };
}
