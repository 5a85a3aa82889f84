/** Wire schemas of the sign-in endpoints (DESIGN §4.8). */
import { Type, type Static } from 'typebox';
import { DisplayName, Slug, ApplicationRef, Timestamp } from '../http/schemas.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from './passwords.js';

const Email = Type.String({ format: 'email', minLength: 3, maxLength: 254 });
const Password = Type.String({ minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH });

export const SignUpBodySchema = Type.Object(
  {
    email: Email,
    password: Password,
    name: Type.Optional(DisplayName({ minLength: 1, maxLength: 200 })),
    applicationId: Type.Optional(ApplicationRef),
    invitationToken: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type SignUpBody = Static<typeof SignUpBodySchema>;

export const SignInBodySchema = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254 }),
    // Any length is checked against the hash (same answer as a wrong password), up to the cap.
    password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH }),
    applicationId: Type.Optional(ApplicationRef),
  },
  { additionalProperties: false },
);
export type SignInBody = Static<typeof SignInBodySchema>;

/** `POST /api/auth/sign-in/username` (spec directory-sources.md): everyone's username, local or a source's. */
export const UsernameSignInBodySchema = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 256 }),
    password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH }),
    applicationId: Type.Optional(ApplicationRef),
  },
  { additionalProperties: false },
);

export const UserSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  emailVerified: Type.Boolean(),
  username: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  givenName: Type.Union([Type.String(), Type.Null()]),
  familyName: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
});

export const UserResponseSchema = Type.Object({ user: UserSchema });

export const SecondFactorMethodSchema = Type.Union([Type.Literal('totp'), Type.Literal('passkey'), Type.Literal('recovery_code')]);

/** A right password that waits for the second step (spec second-factor.md): no session cookie yet. */
export const SecondFactorChallengeSchema = Type.Object(
  { secondFactor: Type.Object({ methods: Type.Array(SecondFactorMethodSchema, { description: 'empty: enrol a second factor first' }) }) },
  { additionalProperties: false },
);

export const SignInResponseSchema = Type.Union([UserResponseSchema, SecondFactorChallengeSchema]);
