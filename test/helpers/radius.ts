/**
 * RADIUS test helpers: the server's RADIUS listeners started on free loopback ports beside an
 * inject app (`startRadiusFor`), an application with a client for 127.0.0.1 (its secret), people
 * with app passwords, and a small UDP client built on the server's codec for the cases the real
 * clients cannot send (hostile packets, exact attributes).
 */
import { createSocket } from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { perFile } from './per-file.js';
import type { TestApp } from './app.js';
import { createApplication } from './accounts.js';
import { startRadius, type RadiusListener } from '../../server/radius/server.js';
import { eapMaterial } from '../../server/radius/credentials.js';
import { Attr, Code, decodePacket, encodeRequest, hideUserPassword, validResponseAuthenticator, type Attribute, type Packet } from '../../server/radius/codec.js';

const listeners: RadiusListener[] = [];
perFile({
  afterAll: async () => {
    await Promise.all(listeners.splice(0).map((l) => l.stop()));
  },
});

/** Starts the RADIUS listeners of `t` on free loopback ports. */
export async function startRadiusFor(t: TestApp) {
  t.config.radius = { enabled: true, host: '127.0.0.1', port: 0, acctPort: 0 };
  const listener = await startRadius(t.app.ctx, t.app.log, eapMaterial(t.config, new Date()));
  listeners.push(listener);
  const state = listener.state();
  return { listener, port: Number(state.auth!.split(':')[1]), acctPort: Number(state.accounting!.split(':')[1]) };
}

/** An application whose RADIUS client is 127.0.0.1 (open sign-up); the client's secret. */
export async function radiusApplication(t: TestApp, id = 'wifi', radius: Record<string, unknown> = {}): Promise<string> {
  const app = await createApplication(t, {
    id, name: id, audience: `https://${id}.example.com`, redirectUris: [`https://${id}.example.com/cb`],
    authPolicy: { signup_policy: 'open' },
    radius: { clients: [{ name: 'Loopback AP', address: '127.0.0.1' }], ...radius },
  });
  const secrets = app.radiusSecrets as Record<string, string>;
  expect(Object.keys(secrets)).toEqual(['Loopback AP']);
  return secrets['Loopback AP']!;
}

/** Sends one datagram to 127.0.0.1:`port` and waits for one answer (undefined after `timeoutMs`). */
export async function exchange(port: number, datagram: Buffer, timeoutMs = 2_000): Promise<Buffer | undefined> {
  const socket = createSocket('udp4');
  try {
    return await new Promise<Buffer | undefined>((resolve, reject) => {
      const timer = setTimeout(() => resolve(undefined), timeoutMs);
      socket.on('message', (msg) => {
        clearTimeout(timer);
        resolve(msg);
      });
      socket.on('error', reject);
      socket.send(datagram, port, '127.0.0.1');
    });
  } finally {
    socket.close();
  }
}

/** A PAP Access-Request as a client sends it, with a Message-Authenticator. */
export function papRequest(secret: string, userName: string, password: string, extra: Attribute[] = [], identifier = 1): { datagram: Buffer; authenticator: Buffer } {
  const authenticator = randomBytes(16);
  const key = Buffer.from(secret);
  const datagram = encodeRequest(Code.accessRequest, identifier, authenticator, [
    { type: Attr.userName, value: Buffer.from(userName) },
    { type: Attr.userPassword, value: hideUserPassword(Buffer.from(password), key, authenticator) },
    ...extra,
  ], key);
  return { datagram, authenticator };
}

/** Sends a PAP request and reads the answer, checking its Response Authenticator. */
export async function pap(port: number, secret: string, userName: string, password: string): Promise<Packet | undefined> {
  const { datagram, authenticator } = papRequest(secret, userName, password);
  const answer = await exchange(port, datagram);
  if (!answer) return undefined;
  const packet = decodePacket(answer);
  expect(validResponseAuthenticator(packet, authenticator, Buffer.from(secret))).toBe(true);
  return packet;
}
