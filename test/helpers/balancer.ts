/**
 * A small HTTP load balancer for multi-instance tests (issue 26): listens on 127.0.0.1 (the one
 * issuer URL every instance is configured with), forwards each request to the backend the
 * current `pick` names — round robin by default — and passes the headers a real reverse proxy
 * passes (Host kept, X-Forwarded-For/-Proto/-Host added). It records which backend answered each
 * request, so a test can show that the steps of one flow alternated instances.
 */
import { createServer, request as forward, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Balancer {
  url: string;
  /** Backend indexes in the order requests were forwarded. */
  served: number[];
  /** Replaces how the next backend is chosen (`n`: the request's number, from 0). */
  pick(choose: (n: number) => number): void;
  close(): Promise<void>;
}

/** Starts the balancer; `backends` is read on every request, so it may be filled in later. */
export async function startBalancer(backends: string[], port = 0): Promise<Balancer> {
  const served: number[] = [];
  let choose = (n: number) => n % backends.length;
  let count = 0;
  const server: Server = createServer((req, res) => {
    const index = choose(count++);
    served.push(index);
    const target = new URL(backends[index]!);
    const upstream = forward(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: {
          ...req.headers,
          'x-forwarded-for': req.socket.remoteAddress ?? '',
          'x-forwarded-proto': 'http',
          'x-forwarded-host': req.headers.host ?? '',
        },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('bad gateway');
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    pick(next) {
      choose = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
