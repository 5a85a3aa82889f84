/**
 * The LDAP listeners (spec ldap.md, "Turning it on"; RFC 4511 §5.2 over TCP, RFC 4513 §3 StartTLS):
 * plain LDAP on GATEHOUSE_LDAP_PORT (StartTLS offered when LAN TLS is on) and LDAPS on
 * GATEHOUSE_LDAPS_PORT (LAN TLS only), with the appliance's certificate, which `setTls` replaces
 * when the server renews it. Started and stopped with the server (main.ts).
 *
 * Abuse limits: at most MAX_CONNECTIONS_PER_ADDRESS connections from one address and
 * MAX_CONNECTIONS in all; past them a new connection gets the Notice of Disconnection (busy) and is
 * closed. Each connection bounds itself (connection.ts); binds share one set of failure budgets.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { createSecureContext, createServer as createTlsServer, type SecureContext, type Server as TlsServer } from 'node:tls';
import type { FastifyBaseLogger } from 'fastify';
import { ConfigError } from '../config.js';
import type { AppContext } from '../context.js';
import { writeMeta } from '../db/meta.js';
import { BindLimits } from './bind.js';
import { LdapConnection, type ConnectionHost } from './connection.js';
import { parseDn } from './dn.js';
import type { Tree } from './entries.js';
import { noticeOfDisconnection, ResultCode } from './protocol.js';
import { search } from './search.js';
import { baseDn } from './tree.js';
import { setRunningListener, type LdapListener } from './running.js';
import { LDAP_STATE_KEY, type LdapState } from './status.js';

export type { LdapListener };

export const MAX_CONNECTIONS_PER_ADDRESS = 64;
export const MAX_CONNECTIONS = 1_024;

const normalAddress = (address: string | undefined) => (address ?? '').replace(/^::ffff:/, '');
const isLoopback = (address: string) => address === '::1' || /^127\./.test(address);

function url(scheme: string, host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `${scheme}://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
}

async function listen(server: Server, port: number, host: string, variable: string): Promise<number> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new ConfigError(`${variable} ${port} on ${host} is already in use.`);
    if (code === 'EACCES') throw new ConfigError(`Not allowed to listen on ${variable} ${port}; pick a port above 1023.`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new ConfigError(`Cannot listen on GATEHOUSE_LDAP_HOST ${host}: no such address on this machine.`);
    throw error;
  }
  const address = server.address();
  return typeof address === 'object' && address ? address.port : port;
}

/** Starts the listeners; `tls` is the appliance's certificate when LAN TLS is on. */
export async function startLdap(ctx: AppContext, log: FastifyBaseLogger, tls?: { key: string; cert: string }): Promise<LdapListener> {
  const config = ctx.config.ldap;
  const base = baseDn(ctx.config);
  const tree: Tree = { base, baseDn: parseDn(base)! };
  let context: SecureContext | undefined = tls ? createSecureContext({ key: tls.key, cert: tls.cert }) : undefined;
  const connections = new Set<LdapConnection>();
  const perAddress = new Map<string, number>();
  const limits = new BindLimits();

  const host: ConnectionHost = {
    ctx,
    log,
    base: { text: base, dn: tree.baseDn },
    limits,
    secureContext: () => context,
    search: (connection, message) => search({ ctx, tree, startTls: () => context !== undefined }, connection, message),
    closed(connection) {
      if (!connections.delete(connection)) return;
      const left = (perAddress.get(connection.address) ?? 1) - 1;
      if (left > 0) perAddress.set(connection.address, left);
      else perAddress.delete(connection.address);
    },
  };

  const admit = (socket: Socket, secure: boolean) => {
    const address = normalAddress(socket.remoteAddress);
    const count = perAddress.get(address) ?? 0;
    if (count >= MAX_CONNECTIONS_PER_ADDRESS || connections.size >= MAX_CONNECTIONS) {
      socket.on('error', () => {});
      socket.end(noticeOfDisconnection(ResultCode.busy, 'too many connections'));
      setTimeout(() => socket.destroy(), 1_000).unref();
      return;
    }
    perAddress.set(address, count + 1);
    connections.add(new LdapConnection(socket, host, secure, address, isLoopback(address)));
  };

  const plain = createServer((socket) => admit(socket, false));
  const port = await listen(plain, config.port, config.host, 'GATEHOUSE_LDAP_PORT');
  let secure: TlsServer | undefined;
  let securePort: number | undefined;
  if (tls) {
    secure = createTlsServer({ key: tls.key, cert: tls.cert }, (socket) => admit(socket, true));
    // A failed handshake is the client's business; it must not reach the process.
    secure.on('tlsClientError', (_error, socket) => socket.destroy());
    try {
      securePort = await listen(secure, config.ldapsPort, config.host, 'GATEHOUSE_LDAPS_PORT');
    } catch (error) {
      plain.close();
      throw error;
    }
  }

  const state: LdapState = {
    enabled: true,
    url: url('ldap', config.host, port),
    ldapsUrl: securePort === undefined ? null : url('ldaps', config.host, securePort),
    startTls: Boolean(tls),
    baseDn: base,
    allowPlain: config.allowPlain,
  };
  await writeMeta(ctx.db, LDAP_STATE_KEY, state, ctx.clock.now());
  log.info({ ldap: state.url, ldaps: state.ldapsUrl, baseDn: base }, 'LDAP directory listening');

  const listener: LdapListener = {
    state: () => ({ ...state, connections: connections.size }),
    setTls(material) {
      context = createSecureContext({ key: material.key, cert: material.cert });
      secure?.setSecureContext({ key: material.key, cert: material.cert });
    },
    async stop() {
      const closing = [plain, ...(secure ? [secure] : [])].map((s) => new Promise<void>((resolve) => s.close(() => resolve())));
      for (const connection of connections) connection.disconnect(ResultCode.unavailable, 'the server is shutting down');
      await Promise.all(closing);
      setRunningListener(ctx, undefined);
    },
  };
  setRunningListener(ctx, listener);
  return listener;
}
