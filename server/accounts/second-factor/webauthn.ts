/**
 * Passkey ceremonies with @simplewebauthn/server (WebAuthn Level 3): options for registration
 * (`residentKey` and `userVerification` required, the person's passkeys excluded) and for
 * authentication, and the verification of each answer against the issuer's RP ID and origin
 * (rp.ts). The library checks the challenge, origin, RP ID hash, user verification, signature and
 * the signature counter (a counter that does not grow on a key that counts means a clone); the
 * store records the new counter and backup state (store.ts). Failures become problems with the
 * reason in words, never a 500.
 */
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { Config } from '../../config.js';
import type { Passkey, Person } from '../../db/schema.js';
import { Problem, badRequest, conflict } from '../../http/problem.js';
import { passkeySupport } from './rp.js';
import type { NewPasskey } from './store.js';

/** How long the browser's prompt may stay open. */
const TIMEOUT_MS = 120_000;

/**
 * The library, loaded on the first ceremony: with its ASN.1 and COSE parsers it is about 5 MB of
 * resident memory once initialised, which a server whose people use no passkey never needs.
 */
let library: Promise<typeof import('@simplewebauthn/server')> | undefined;
const simpleWebAuthn = () => (library ??= import('@simplewebauthn/server'));

export const passkeyInvalid = (reason: string) => badRequest('passkey_invalid', reason);
export const passkeyNotRecognised = () =>
  new Problem(401, 'passkey_not_recognised', 'This passkey is not known here: it may have been removed. Sign in another way.', undefined, {
    'www-authenticate': 'Cookie',
  });

/** The RP ID and origin, or 409 `passkeys_unavailable` saying why this issuer cannot offer passkeys. */
export function relyingParty(config: Config): { rpId: string; origin: string } {
  const support = passkeySupport(config.issuer);
  if (!support.available) throw conflict('passkeys_unavailable', support.message);
  return support;
}

const descriptors = (list: Passkey[]) => list.map((p) => ({ id: p.credentialId, transports: p.transports }));

export async function registrationOptions(config: Config, person: Person, existing: Passkey[]) {
  const { rpId } = relyingParty(config);
  return (await simpleWebAuthn()).generateRegistrationOptions({
    rpName: 'Gatehouse',
    rpID: rpId,
    userName: person.email,
    userDisplayName: person.name ?? person.email,
    userID: new TextEncoder().encode(person.id),
    attestationType: 'none',
    excludeCredentials: descriptors(existing),
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    timeout: TIMEOUT_MS,
  });
}

/** Verifies a registration answer; the passkey to store, or 400 `passkey_invalid` with the reason. */
export async function verifyRegistration(
  config: Config,
  personId: string,
  name: string,
  response: unknown,
  expectedChallenge: string | undefined,
): Promise<NewPasskey> {
  const { rpId, origin } = relyingParty(config);
  if (!expectedChallenge) throw passkeyInvalid('No passkey registration was started here, or it expired: start again.');
  let verified;
  try {
    verified = await (await simpleWebAuthn()).verifyRegistrationResponse({
      response: response as RegistrationResponseJSON,
      expectedChallenge,
      expectedOrigin: origin,
      expectedRPID: rpId,
      requireUserVerification: true,
    });
  } catch (error) {
    throw passkeyInvalid(`The passkey could not be checked: ${(error as Error).message}`);
  }
  if (!verified.verified) throw passkeyInvalid('The passkey answer did not verify.');
  const info = verified.registrationInfo;
  return {
    personId,
    credentialId: info.credential.id,
    publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
    counter: info.credential.counter,
    transports: info.credential.transports ?? [],
    deviceType: info.credentialDeviceType,
    backedUp: info.credentialBackedUp,
    aaguid: info.aaguid,
    name,
  };
}

/** Options for an assertion: `allow` lists the person's passkeys (second step), or none (passkey-first). */
export async function authenticationOptions(config: Config, allow: Passkey[] | undefined) {
  const { rpId } = relyingParty(config);
  return (await simpleWebAuthn()).generateAuthenticationOptions({
    rpID: rpId,
    userVerification: 'required',
    timeout: TIMEOUT_MS,
    ...(allow ? { allowCredentials: descriptors(allow) } : {}),
  });
}

/** The challenge an assertion or attestation answers (base64url), read from its client data. */
export function challengeOf(response: unknown): string | undefined {
  try {
    const clientData = (response as { response?: { clientDataJSON?: unknown } }).response?.clientDataJSON;
    if (typeof clientData !== 'string' || clientData.length > 4000) return undefined;
    const parsed = JSON.parse(Buffer.from(clientData, 'base64url').toString('utf8')) as { challenge?: unknown };
    return typeof parsed.challenge === 'string' ? parsed.challenge : undefined;
  } catch {
    return undefined;
  }
}

/** The credential id an assertion names. */
export function credentialIdOf(response: unknown): string | undefined {
  const id = (response as { id?: unknown })?.id;
  return typeof id === 'string' && id.length > 0 && id.length <= 1400 ? id : undefined;
}

/**
 * Verifies an assertion by `passkey`; the counter and backup state to record. A user handle, when
 * the authenticator sends one, must be the passkey's person.
 */
export async function verifyAssertion(config: Config, passkey: Passkey, response: unknown, expectedChallenge: string) {
  const { rpId, origin } = relyingParty(config);
  const userHandle = (response as { response?: { userHandle?: unknown } }).response?.userHandle;
  if (typeof userHandle === 'string' && userHandle !== Buffer.from(passkey.personId).toString('base64url')) {
    throw passkeyNotRecognised();
  }
  let verified;
  try {
    verified = await (await simpleWebAuthn()).verifyAuthenticationResponse({
      response: response as AuthenticationResponseJSON,
      expectedChallenge,
      expectedOrigin: origin,
      expectedRPID: rpId,
      credential: {
        id: passkey.credentialId,
        publicKey: new Uint8Array(Buffer.from(passkey.publicKey, 'base64url')),
        counter: passkey.counter,
        transports: passkey.transports as never,
      },
      requireUserVerification: true,
    });
  } catch (error) {
    throw new Problem(401, 'passkey_invalid', `The passkey answer did not verify: ${(error as Error).message}`);
  }
  if (!verified.verified) throw new Problem(401, 'passkey_invalid', 'The passkey answer did not verify.');
  return { counter: verified.authenticationInfo.newCounter, backedUp: verified.authenticationInfo.credentialBackedUp };
}
