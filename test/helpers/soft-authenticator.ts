/**
 * A software WebAuthn authenticator for API tests that run without a browser: a P-256 key
 * (ES256), `none` attestation, user presence and verification always given, a resident
 * credential with the user handle it was registered with. It builds the same JSON answers a
 * browser hands to `PublicKeyCredential.toJSON()` (WebAuthn L3 §5.1, §6.1, §6.5), so the server
 * verifies them with its real code (SimpleWebAuthn). The browser suites use Chromium's virtual
 * authenticator instead (test/e2e/passkeys-browser.test.ts).
 */
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest();
const b64u = (data: Uint8Array) => Buffer.from(data).toString('base64url');
const u32 = (n: number) => { const b = Buffer.alloc(4); b.writeUInt32BE(n); return b; };
const u16 = (n: number) => { const b = Buffer.alloc(2); b.writeUInt16BE(n); return b; };

// Authenticator data flags (WebAuthn L3 §6.1): user present, user verified, attested credential data.
const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

export class SoftAuthenticator {
  private readonly keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  private readonly rawId = randomBytes(32);
  private counter = 0;
  private userHandle: string | undefined;

  /** `origin`: the issuer's origin; the RP ID is its host name. */
  constructor(private readonly origin: string) {}

  get credentialId(): string {
    return b64u(this.rawId);
  }

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: this.origin, crossOrigin: false }));
  }

  private rpIdHash(): Buffer {
    return sha256(Buffer.from(new URL(this.origin).hostname));
  }

  /** The answer to creation options (`/api/me/passkeys/options`): a new credential. */
  register(options: { challenge: string; user: { id: string } }) {
    this.userHandle = options.user.id;
    const jwk = this.keys.publicKey.export({ format: 'jwk' });
    const coseKey = isoCBOR.encode(new Map<number, number | Uint8Array>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, Buffer.from(jwk.x!, 'base64url')],
      [-3, Buffer.from(jwk.y!, 'base64url')],
    ]));
    const authData = Buffer.concat([
      this.rpIdHash(), Buffer.from([UP | UV | AT]), u32(this.counter),
      Buffer.alloc(16), u16(this.rawId.length), this.rawId, Buffer.from(coseKey),
    ]);
    const attestationObject = isoCBOR.encode(new Map<string, string | Map<string, never> | Uint8Array>([
      ['fmt', 'none'], ['attStmt', new Map()], ['authData', authData],
    ]));
    return {
      id: this.credentialId, rawId: this.credentialId, type: 'public-key', clientExtensionResults: {},
      response: { clientDataJSON: b64u(this.clientData('webauthn.create', options.challenge)), attestationObject: b64u(attestationObject), transports: ['internal'] },
    };
  }

  /** The answer to request options (passkey-first or second step): an assertion signed by the key. */
  assert(options: { challenge: string }) {
    this.counter += 1;
    const authData = Buffer.concat([this.rpIdHash(), Buffer.from([UP | UV]), u32(this.counter)]);
    const clientData = this.clientData('webauthn.get', options.challenge);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), this.keys.privateKey);
    return {
      id: this.credentialId, rawId: this.credentialId, type: 'public-key', clientExtensionResults: {},
      response: {
        clientDataJSON: b64u(clientData), authenticatorData: b64u(authData), signature: b64u(signature),
        ...(this.userHandle ? { userHandle: this.userHandle } : {}),
      },
    };
  }
}
