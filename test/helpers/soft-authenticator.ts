/**
 * A software WebAuthn authenticator for the benchmarks and for API tests that run without a
 * browser (the browser suites use Chromium's virtual authenticator): one P-256 key made with node:crypto, answering registration
 * with `none` attestation and assertions with user presence and verification set, as a platform
 * passkey would. The CBOR it needs (a COSE key, an attestation object) is small enough to write
 * out byte by byte (RFC 8949 §3; WebAuthn §6.5.1, §6.1).
 */
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest();
const b64u = (data: Buffer) => data.toString('base64url');
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};

export class SoftAuthenticator {
  private readonly keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  readonly credentialId = randomBytes(32);
  private counter = 0;

  constructor(private readonly origin: string, private readonly rpId: string) {}

  /** COSE_Key (EC2, ES256, P-256): {1: 2, 3: -7, -1: 1, -2: x, -3: y}. */
  private coseKey(): Buffer {
    const jwk = this.keys.publicKey.export({ format: 'jwk' });
    const x = Buffer.from(jwk.x!, 'base64url');
    const y = Buffer.from(jwk.y!, 'base64url');
    return Buffer.concat([Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20]), x, Buffer.from([0x22, 0x58, 0x20]), y]);
  }

  private clientData(type: string, challenge: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: this.origin, crossOrigin: false }));
  }

  /** RegistrationResponseJSON for creation options (flags UP, UV, AT). */
  register(options: { challenge: string; user: { id: string } }) {
    const attested = Buffer.concat([Buffer.alloc(16), Buffer.from([0, this.credentialId.length]), this.credentialId, this.coseKey()]);
    const authData = Buffer.concat([sha256(Buffer.from(this.rpId)), Buffer.from([0x45]), u32(this.counter), attested]);
    const len = Buffer.alloc(2);
    len.writeUInt16BE(authData.length);
    const attestation = Buffer.concat([
      Buffer.from([0xa3, 0x63]), Buffer.from('fmt'), Buffer.from([0x64]), Buffer.from('none'),
      Buffer.from([0x67]), Buffer.from('attStmt'), Buffer.from([0xa0]),
      Buffer.from([0x68]), Buffer.from('authData'), Buffer.from([0x59]), len, authData,
    ]);
    return {
      id: b64u(this.credentialId), rawId: b64u(this.credentialId), type: 'public-key',
      response: { clientDataJSON: b64u(this.clientData('webauthn.create', options.challenge)), attestationObject: b64u(attestation), transports: ['internal'] },
      clientExtensionResults: {}, authenticatorAttachment: 'platform',
    };
  }

  /** AuthenticationResponseJSON for request options; `userHandle` is the account's WebAuthn user id. */
  assert(challenge: string, userHandle: string) {
    this.counter += 1;
    const authData = Buffer.concat([sha256(Buffer.from(this.rpId)), Buffer.from([0x05]), u32(this.counter)]);
    const clientData = this.clientData('webauthn.get', challenge);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), this.keys.privateKey);
    return {
      id: b64u(this.credentialId), rawId: b64u(this.credentialId), type: 'public-key',
      response: { clientDataJSON: b64u(clientData), authenticatorData: b64u(authData), signature: b64u(signature), userHandle },
      clientExtensionResults: {}, authenticatorAttachment: 'platform',
    };
  }
}
