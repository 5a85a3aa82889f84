/**
 * A RADIUS client that speaks EAP-TTLS/PAP and EAP-TLS as a supplicant behind an access point
 * does, built on Node's TLS over the same EAP framing (RFC 3579, RFC 5216, RFC 5281), for the
 * RADIUS integration test on both engines and `npm run bench -- radius` (no vitest import here:
 * the bench loads it too). The real supplicant, eapol_test, is test/interop/radius-clients.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { Duplex } from 'node:stream';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { Attr, Code, attribute, decodePacket, encodeRequest, split, type Packet } from '../../server/radius/codec.js';
import { EapCode, EapType, Flag, decodeEap, decodeTlsFragment, encodeEap, encodeTlsFragment } from '../../server/radius/eap.js';
import { AVP_USER_NAME, AVP_USER_PASSWORD, encodeAvp } from '../../server/radius/ttls-avp.js';

/** One UDP socket on 127.0.0.1 asking 127.0.0.1:`port` one question at a time. */
export class Asker {
  private waiting: ((answer: Buffer) => void) | undefined;
  private constructor(private readonly socket: Socket, private readonly port: number) {
    socket.on('message', (m) => {
      const resolve = this.waiting;
      this.waiting = undefined;
      resolve?.(m);
    });
  }

  static async open(port: number): Promise<Asker> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return new Asker(socket, port);
  }

  ask(datagram: Buffer, timeoutMs = 3_000): Promise<Buffer | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting = undefined;
        resolve(undefined);
      }, timeoutMs);
      this.waiting = (answer) => {
        clearTimeout(timer);
        resolve(answer);
      };
      this.socket.send(datagram, this.port, '127.0.0.1');
    });
  }

  close() {
    this.socket.close();
  }
}

export interface InnerPap {
  login: string;
  password: string;
}

/** Retransmissions the EAP client needed (a NAS retries after 3 s of silence), over all runs. */
export const eapStats = { retransmits: 0 };

const eapOf = (packet: Packet) => decodeEap(Buffer.concat(packet.attributes.filter((a) => a.type === Attr.eapMessage).map((a) => a.value)));

/**
 * One whole EAP-TTLS/PAP or EAP-TLS authentication as a supplicant runs it: identity, (a Nak for
 * TLS), the TLS handshake in fragments, the tunnelled PAP (TTLS); resolves with the last answer
 * (Access-Accept or Access-Reject).
 */
export async function eapAuthentication(asker: Asker, secret: Buffer, method: 'ttls' | 'tls', identity: string, tls: ConnectionOptions, inner?: InnerPap): Promise<Packet> {
  let state: Buffer | undefined;
  let radiusId = 0;
  const send = async (eap: Buffer): Promise<Packet> => {
    const attrs = [{ type: Attr.userName, value: Buffer.from(identity) }, ...split(Attr.eapMessage, eap), ...(state ? [{ type: Attr.state, value: state }] : [])];
    const datagram = encodeRequest(Code.accessRequest, (radiusId = (radiusId + 1) & 0xff), randomBytes(16), attrs, secret);
    // As a NAS does: the same datagram again after a silence (the server answers it from its cache).
    let answer = await asker.ask(datagram);
    for (let retry = 0; !answer && retry < 2; retry++) {
      eapStats.retransmits++;
      answer = await asker.ask(datagram);
    }
    if (!answer) throw new Error(`no answer (${method}, after ${eapStats.retransmits} retransmissions)`);
    const packet = decodePacket(answer);
    state = attribute(packet, Attr.state) ?? state;
    return packet;
  };
  const type = method === 'tls' ? EapType.tls : EapType.ttls;
  let packet = await send(encodeEap(EapCode.response, 0, EapType.identity, Buffer.from(identity)));
  let request = eapOf(packet);
  if (method === 'tls') {
    packet = await send(encodeEap(EapCode.response, request.identifier, EapType.nak, Buffer.from([EapType.tls])));
    request = eapOf(packet);
  }
  const out: Buffer[] = [];
  const wire = new Duplex({ read() {}, write(chunk: Buffer, _e, callback) { out.push(chunk); callback(); } });
  const socket = tlsConnect({ socket: wire, ...tls, checkServerIdentity: () => undefined });
  socket.on('secureConnect', () => {
    if (inner) {
      const password = Buffer.alloc(Math.ceil(inner.password.length / 16) * 16);
      Buffer.from(inner.password).copy(password);
      socket.write(Buffer.concat([encodeAvp(AVP_USER_NAME, Buffer.from(inner.login)), encodeAvp(AVP_USER_PASSWORD, password)]));
    }
  });
  let failure: Error | undefined;
  socket.on('error', (error: Error) => (failure ??= error));
  socket.on('data', () => {});
  const settle = async () => {
    for (let i = 0, quiet = 0; i < 64 && quiet < 2; i++) {
      const before = out.length;
      await new Promise((resolve) => setImmediate(resolve));
      quiet = out.length === before ? quiet + 1 : 0;
    }
  };
  let incoming: Buffer[] = [];
  try {
    for (let round = 0; round < 60; round++) {
      if (failure) throw failure;
      if (packet.code !== Code.accessChallenge) return packet;
      const fragment = decodeTlsFragment(request.data);
      if (!(fragment.flags & Flag.start)) incoming.push(fragment.data);
      if (fragment.flags & Flag.more) {
        packet = await send(encodeEap(EapCode.response, request.identifier, type, encodeTlsFragment(0, Buffer.alloc(0))));
        request = eapOf(packet);
        continue;
      }
      if (incoming.length) wire.push(Buffer.concat(incoming));
      incoming = [];
      await settle();
      const flight = Buffer.concat(out.splice(0));
      // Our flight in fragments of 1,000, each acknowledged; an empty one acknowledges theirs.
      let offset = 0;
      do {
        const chunk = flight.subarray(offset, offset + 1000);
        const first = offset === 0;
        offset += chunk.length;
        const more = offset < flight.length;
        const payload = first && more ? encodeTlsFragment(Flag.more, chunk, flight.length) : encodeTlsFragment(more ? Flag.more : 0, chunk);
        packet = await send(encodeEap(EapCode.response, request.identifier, type, payload));
        if (packet.code !== Code.accessChallenge) return packet;
        request = eapOf(packet);
      } while (offset < flight.length);
    }
    throw new Error('too many rounds');
  } finally {
    socket.destroy();
  }
}
