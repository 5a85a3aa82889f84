/** Wire schemas of the self-service API (spec §2 Membership, Session, Linked account; §4.3). */
import { Type, type Static } from 'typebox';
import { Timestamp } from '../http/schemas.js';
import { PASSWORD_MAX_LENGTH } from '../accounts/passwords.js';
import { NameFields } from '../people/schemas.js';

/** `PATCH /api/me`: the person's own names (the username is an administrator's to change). */
export const MePatchBody = Type.Object(NameFields, { additionalProperties: false, minProperties: 1 });

const ProfileValue = Type.Union([Type.String(), Type.Number(), Type.Boolean()]);

export const MembershipSchema = Type.Object({
  applicationId: Type.String(),
  applicationName: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('suspended')]),
  role: Type.Union([Type.Literal('member'), Type.Literal('admin')]),
  profile: Type.Record(Type.String(), ProfileValue),
  joinedAt: Timestamp,
  lastActiveAt: Timestamp,
});
export const MembershipsResponse = Type.Object({ memberships: Type.Array(MembershipSchema) });

export const ProfilePatchBody = Type.Object(
  {
    /** Merged into the stored profile; `null` clears an optional field. */
    profile: Type.Record(Type.String({ maxLength: 64 }), Type.Union([ProfileValue, Type.Null()]), { maxProperties: 50 }),
  },
  { additionalProperties: false },
);
export type ProfilePatch = Static<typeof ProfilePatchBody>;

export const SessionSchema = Type.Object({
  id: Type.String(),
  device: Type.String(),
  ip: Type.String(),
  created_at: Timestamp,
  expires_at: Timestamp,
  last_seen_at: Timestamp,
  is_active: Type.Boolean(),
  current: Type.Boolean(),
});
export const SessionsResponse = Type.Object({ sessions: Type.Array(SessionSchema) });
export const SignOutOthersResponse = Type.Object({ revoked: Type.Integer({ minimum: 0 }) });

export const LinkedAccountSchema = Type.Object({ provider: Type.String(), email: Type.String(), linked_at: Timestamp });
export const LinkedAccountsResponse = Type.Object({ accounts: Type.Array(LinkedAccountSchema) });

export const PasswordChangeBody = Type.Object(
  {
    // Any length is checked against the hash (a wrong one is just wrong), up to the cap.
    currentPassword: Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH }),
    // Length in characters (not UTF-16 units) is checked by the service, naming body.newPassword.
    newPassword: Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH * 2 }),
  },
  { additionalProperties: false },
);

export const AppParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });
export const SessionParams = Type.Object({ sid: Type.String({ minLength: 1, maxLength: 200 }) });
export const ProviderParams = Type.Object({ provider: Type.String({ minLength: 1, maxLength: 64 }) });
