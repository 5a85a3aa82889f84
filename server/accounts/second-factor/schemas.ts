/** Wire schemas of the second-factor endpoints (spec second-factor.md). */
import { Type } from 'typebox';
import { NullableTimestamp, Slug, ApplicationRef, Timestamp } from '../../http/schemas.js';
import { UserSchema } from '../schemas.js';

/** A 6-digit code (spaces and a dash in the middle are forgiven), or a recovery code. */
export const CodeBody = Type.Object({ code: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });

/** What `@simplewebauthn/browser` hands back (RegistrationResponseJSON / AuthenticationResponseJSON); the library checks the rest. */
export const WebAuthnResponseSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 1400 }),
    rawId: Type.String({ minLength: 1, maxLength: 1400 }),
    type: Type.Literal('public-key'),
    response: Type.Object({ clientDataJSON: Type.String({ maxLength: 4000 }) }, { additionalProperties: true }),
  },
  { additionalProperties: true, description: 'The browser credential as JSON (SimpleWebAuthn RegistrationResponseJSON / AuthenticationResponseJSON)' },
);

export const AssertionBody = Type.Object({ response: WebAuthnResponseSchema }, { additionalProperties: false });
export const PasskeySignInBody = Type.Object({ response: WebAuthnResponseSchema, applicationId: Type.Optional(ApplicationRef) }, { additionalProperties: false });

export const PasskeyName = Type.String({ minLength: 1, maxLength: 100 });
export const PasskeyRegisterBody = Type.Object({ name: PasskeyName, response: WebAuthnResponseSchema }, { additionalProperties: false });
export const EnrolPasskeyBody = Type.Object({ name: Type.Optional(PasskeyName), response: WebAuthnResponseSchema }, { additionalProperties: false });
export const PasskeyPatchBody = Type.Object({ name: PasskeyName }, { additionalProperties: false });
export const PasskeyParams = Type.Object({ id: Type.String({ maxLength: 200 }) });

/** WebAuthn creation / request options (PublicKeyCredentialCreationOptionsJSON / …RequestOptionsJSON). */
export const WebAuthnOptionsSchema = Type.Object(
  { challenge: Type.String() },
  { additionalProperties: true, description: 'WebAuthn options as JSON, for @simplewebauthn/browser' },
);

export const RecoveryCodesSchema = Type.Array(Type.String(), { description: '10 single-use codes, shown only in this answer' });

export const UserWithCodesSchema = Type.Object({ user: UserSchema, recoveryCodes: Type.Optional(RecoveryCodesSchema) });

export const TotpStartSchema = Type.Object({
  secret: Type.String({ description: 'base32 secret, for typing into an authenticator app' }),
  uri: Type.String({ description: 'otpauth://totp/… URI (what the QR code holds)' }),
});

export const PasskeySchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  createdAt: Timestamp,
  lastUsedAt: NullableTimestamp,
  backedUp: Type.Boolean({ description: 'synced to other devices by its provider (WebAuthn backup state)' }),
});

export const SecuritySchema = Type.Object({
  totp: Type.Object({ enabled: Type.Boolean(), confirmedAt: NullableTimestamp }),
  passkeys: Type.Array(PasskeySchema),
  recoveryCodes: Type.Object({ remaining: Type.Integer() }),
});

export const TotpConfirmSchema = Type.Object({ recoveryCodes: Type.Optional(RecoveryCodesSchema) });
export const RecoveryCodesResponse = Type.Object({ recoveryCodes: RecoveryCodesSchema });

/** The administrator's view of a member's factors: counts and dates, never secrets. */
export const SecondFactorSummarySchema = Type.Object({
  totp: Type.Object({ enabled: Type.Boolean(), confirmedAt: NullableTimestamp }),
  passkeys: Type.Object({ count: Type.Integer(), lastUsedAt: NullableTimestamp }),
  recoveryCodes: Type.Object({ remaining: Type.Integer(), createdAt: NullableTimestamp }),
});
