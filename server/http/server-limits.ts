/**
 * Connection-level limits of the listening server (issue 9, hostile input): how long a client may
 * take to send its headers and its whole request, how long an idle keep-alive connection stays
 * open, and how large the headers may be. A slowloris client or a slow body is cut off with 408,
 * oversized headers with 431, a request Node cannot parse with 400 — each as problem+json, then
 * the connection is closed. Other clients are unaffected: nothing here waits on the event loop.
 *
 * `GATEHOUSE_HEADERS_TIMEOUT_MS` and `GATEHOUSE_REQUEST_TIMEOUT_MS` override the two timeouts
 * (tests use short ones).
 */
import { STATUS_CODES, type ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyServerOptions } from 'fastify';
import { positiveIntegerEnv, type Config } from '../config.js';
import { Problem, problemBody } from './problem.js';

export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;
/** Idle keep-alive connections close after this; relying parties reconnect cheaply on the LAN. */
export const KEEP_ALIVE_TIMEOUT_MS = 30_000;
/** A socket with no traffic at all for this long is destroyed (covers anything the others miss). */
export const IDLE_SOCKET_TIMEOUT_MS = 60_000;
/** Node's default, stated: a session cookie and a bearer JWT fit many times over. */
export const MAX_HEADER_BYTES = 16 * 1024;


/** Node's answer to a connection-level error, as problem details; the socket is then closed. */
function clientErrorAnswer(error: NodeJS.ErrnoException): Problem {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new Problem(408, 'request_timeout', 'The request took too long to arrive.');
  if (error.code === 'HPE_HEADER_OVERFLOW') return new Problem(431, 'headers_too_large', `Request headers are limited to ${MAX_HEADER_BYTES} bytes.`);
  return new Problem(400, 'bad_request', 'The request could not be parsed.');
}

function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const problem = clientErrorAnswer(error);
    const body = JSON.stringify(problemBody(problem));
    socket.write(
      `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\nContent-Type: application/problem+json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** The Fastify options for these limits, plus the Node server options they need. */
export function serverLimits(config: Config) {
  const headersTimeout = positiveIntegerEnv(config.env, 'GATEHOUSE_HEADERS_TIMEOUT_MS', HEADERS_TIMEOUT_MS);
  const requestTimeout = Math.max(headersTimeout, positiveIntegerEnv(config.env, 'GATEHOUSE_REQUEST_TIMEOUT_MS', REQUEST_TIMEOUT_MS));
  const node: ServerOptions = {
    headersTimeout,
    requestTimeout,
    maxHeaderSize: MAX_HEADER_BYTES,
    // Node enforces both timeouts on this tick (default 30 s, which would let them overrun).
    connectionsCheckingInterval: Math.min(1_000, Math.ceil(headersTimeout / 4)),
  };
  const fastify = {
    requestTimeout,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    connectionTimeout: IDLE_SOCKET_TIMEOUT_MS,
    clientErrorHandler,
  } satisfies Partial<FastifyServerOptions>;
  return { node, fastify };
}
