/**
 * Hostile input for RADIUS (spec radius.md, "Hostile input and limits"; issue 43): fast-check
 * against the decoders themselves (random bytes and mutated valid packets: each either decodes or
 * throws its own typed error, never anything else, and never reads past what it was given), then
 * against the listener over UDP: random datagrams, and random EAP-Message contents wrapped in a
 * packet with a correct Message-Authenticator (so they reach the EAP, TLS-fragment and AVP
 * decoders), and conversations driven with random TLS data. After every batch a valid PAP request
 * is still answered at once, and nothing reaches the listener's error path.
 *
 * `FUZZ_SEED=<n>` replays a run; `FUZZ_RUNS=<n>` sets the cases per property.
 */
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from '../helpers/app.js';
import { memberWithAppPassword } from '../helpers/ldap.js';
import { exchange, pap, radiusApplication, startRadiusFor } from '../helpers/radius.js';
import { Attr, Code, RadiusCodecError, attribute, decodePacket, encodeRequest, split } from '../../server/radius/codec.js';
import { EapCode, EapError, EapType, Reassembly, decodeEap, decodeTlsFragment, encodeEap } from '../../server/radius/eap.js';
import { decodeAvps } from '../../server/radius/ttls-avp.js';

const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

let t: TestApp;
let dir: string;
let port: number;
let secret: string;
let password: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-radius-fuzz-'));
  t = await makeApp({ perFile: true, config: { dataDir: dir } });
  secret = await radiusApplication(t, 'wifi');
  password = (await memberWithAppPassword(t, 'ada@example.com', 'wifi')).password;
  ({ port } = await startRadiusFor(t));
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const params = { seed: SEED, numRuns: RUNS };

/** Whether `fn` returns or throws one of `allowed`. */
function decodesOrRefuses(fn: () => unknown, ...allowed: (new (...args: never[]) => Error)[]): boolean {
  try {
    fn();
    return true;
  } catch (error) {
    if (allowed.some((kind) => error instanceof kind)) return true;
    throw error;
  }
}

const validRequest = () =>
  encodeRequest(Code.accessRequest, 1, randomBytes(16), [
    { type: Attr.userName, value: Buffer.from('ada') },
    ...split(Attr.eapMessage, encodeEap(EapCode.response, 1, EapType.identity, Buffer.from('ada'))),
  ], Buffer.from('s'));

/** A valid packet with bytes flipped, cut short, its Length inflated, or bytes added. */
const mutated = fc.tuple(fc.constantFrom('flip', 'cut', 'length', 'append'), fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 64 })).map(([how, at, extra]) => {
  const packet = Buffer.from(validRequest());
  if (how === 'flip') packet.writeUInt8(packet.readUInt8(at % packet.length) ^ (extra[0]! || 1), at % packet.length);
  if (how === 'cut') return packet.subarray(0, at % packet.length);
  if (how === 'length') packet.writeUInt16BE(20 + (at % 5000), 2);
  if (how === 'append') return Buffer.concat([packet, Buffer.from(extra)]);
  return packet;
});

describe('the decoders', () => {
  it('a RADIUS packet decodes or is refused with RadiusCodecError', () => {
    fc.assert(fc.property(fc.oneof(fc.uint8Array({ maxLength: 5000 }).map((b) => Buffer.from(b)), mutated), (bytes) =>
      decodesOrRefuses(() => {
        const packet = decodePacket(bytes);
        for (const a of packet.attributes) expect(a.value.byteOffset + a.value.length).toBeLessThanOrEqual(bytes.byteOffset + packet.raw.length);
      }, RadiusCodecError)), params);
  });

  it('EAP packets, TLS fragments, their reassembly and TTLS AVPs decode or are refused with EapError', () => {
    const bytes = fc.uint8Array({ maxLength: 2000 }).map((b) => Buffer.from(b));
    fc.assert(fc.property(bytes, (b) => decodesOrRefuses(() => decodeEap(b), EapError)), params);
    fc.assert(fc.property(bytes, (b) => decodesOrRefuses(() => decodeTlsFragment(b), EapError)), params);
    fc.assert(fc.property(bytes, (b) => decodesOrRefuses(() => decodeAvps(b), EapError)), params);
    fc.assert(
      fc.property(fc.array(bytes, { maxLength: 80 }), (fragments) =>
        decodesOrRefuses(() => {
          const reassembly = new Reassembly();
          for (const f of fragments) if (f.length) reassembly.add(decodeTlsFragment(f));
        }, EapError)),
      params,
    );
  });
});

async function stillAnswers(): Promise<void> {
  const answer = await pap(port, secret, 'ada@example.com', password);
  expect(answer?.code).toBe(Code.accessAccept);
}

async function spray(datagrams: Buffer[]): Promise<void> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  for (const d of datagrams) socket.send(d, port, '127.0.0.1');
  await new Promise((resolve) => setTimeout(resolve, 50));
  socket.close();
}

describe('the listener', () => {
  it('random datagrams and mutated requests: dropped or answered, and a valid request still answered', async () => {
    const batches = fc.sample(fc.array(fc.oneof(fc.uint8Array({ maxLength: 4200 }).map((b) => Buffer.from(b)), mutated), { minLength: 1, maxLength: 20 }), { seed: SEED, numRuns: Math.ceil(RUNS / 10) });
    for (const batch of batches) {
      await spray(batch);
      await stillAnswers();
    }
  }, 120_000);

  it('random EAP-Message contents with a right Message-Authenticator reach the EAP decoders and are refused or dropped', async () => {
    const key = Buffer.from(secret);
    const contents = fc.sample(
      fc.oneof(
        fc.uint8Array({ maxLength: 1500 }).map((b) => Buffer.from(b)),
        fc.tuple(fc.constantFrom(EapType.ttls, EapType.tls, EapType.nak, EapType.peap, EapType.identity), fc.uint8Array({ maxLength: 1200 })).map(([type, data]) => encodeEap(EapCode.response, 1, type, Buffer.from(data))),
      ),
      { seed: SEED, numRuns: RUNS },
    );
    for (let i = 0; i < contents.length; i += 25) {
      const datagrams = contents.slice(i, i + 25).map((eap, n) =>
        encodeRequest(Code.accessRequest, n, randomBytes(16), [{ type: Attr.userName, value: Buffer.from('x') }, ...split(Attr.eapMessage, eap)], key),
      );
      await spray(datagrams);
      await stillAnswers();
    }
  }, 120_000);

  it('conversations fed random TLS records are refused, and their state freed', async () => {
    const key = Buffer.from(secret);
    const records = fc.sample(fc.array(fc.uint8Array({ minLength: 1, maxLength: 900 }), { minLength: 1, maxLength: 6 }), { seed: SEED, numRuns: Math.ceil(RUNS / 10) });
    for (const flight of records) {
      const first = decodePacket((await exchange(port, encodeRequest(Code.accessRequest, 1, randomBytes(16), split(Attr.eapMessage, encodeEap(EapCode.response, 7, EapType.identity, Buffer.from('ada'))), key)))!);
      expect(first.code).toBe(Code.accessChallenge);
      const state = attribute(first, Attr.state)!;
      let eapId = decodeEap(Buffer.concat(first.attributes.filter((a) => a.type === Attr.eapMessage).map((a) => a.value))).identifier;
      for (const record of flight) {
        const body = Buffer.concat([Buffer.from([0]), Buffer.from(record)]);
        const answer = await exchange(port, encodeRequest(Code.accessRequest, 2, randomBytes(16), [...split(Attr.eapMessage, encodeEap(EapCode.response, eapId, EapType.ttls, body)), { type: Attr.state, value: state }], key), 1_000);
        if (!answer) break;
        const packet = decodePacket(answer);
        if (packet.code !== Code.accessChallenge) {
          expect(packet.code).toBe(Code.accessReject);
          break;
        }
        eapId = decodeEap(Buffer.concat(packet.attributes.filter((a) => a.type === Attr.eapMessage).map((a) => a.value))).identifier;
      }
    }
    await stillAnswers();
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).not.toMatch(/gatehouse_radius_dropped_total\{reason="error"\}/);
  }, 120_000);
});
