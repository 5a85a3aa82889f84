/** Wire schemas of the administrators API (spec administrators-and-people.md, "Administrators"). */
import { Type } from 'typebox';
import { Timestamp } from '../http/schemas.js';

export const AdminRoleSchema = Type.Union([Type.Literal('owner'), Type.Literal('people_manager'), Type.Literal('app_manager')], {
  description: 'owner: everything; people_manager: people, groups, invitations, sessions and second-factor resets in every application; app_manager: the listed applications only',
});

export const AdministratorSchema = Type.Object(
  {
    personId: Type.String(),
    email: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
    role: AdminRoleSchema,
    applications: Type.Array(Type.String(), { description: 'the applications an app_manager manages (empty for other roles)' }),
    grantedBy: Type.String({ description: 'who granted the role, as written in the audit log' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { additionalProperties: false },
);

export const AdministratorListSchema = Type.Object({ administrators: Type.Array(AdministratorSchema) }, { additionalProperties: false });

export const AdministratorPutSchema = Type.Object(
  {
    role: AdminRoleSchema,
    applications: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100 })),
  },
  { additionalProperties: false },
);

export const AdministratorParams = Type.Object({ personId: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

/** Who is calling the admin API, so the panel can show their name and hide what their role cannot do. */
export const AdminMeSchema = Type.Object(
  {
    via: Type.Union([Type.Literal('admin_token'), Type.Literal('panel'), Type.Literal('api_key')]),
    personId: Type.Union([Type.String(), Type.Null()]),
    email: Type.Union([Type.String(), Type.Null()]),
    name: Type.Union([Type.String(), Type.Null()]),
    role: Type.Union([AdminRoleSchema, Type.Null()], { description: 'null for an API key; the admin token acts as an owner' }),
    applications: Type.Array(Type.String()),
    capabilities: Type.Object(
      {
        everything: Type.Boolean({ description: 'every admin route (an owner, the admin token)' }),
        routes: Type.Array(
          Type.Object(
            {
              route: Type.String({ description: 'METHOD and route as registered under /api/admin: `PATCH /applications/:id`' }),
              applications: Type.Union([Type.Literal('all'), Type.Literal('listed')], { description: '`all`: for every application; `listed`: for those in `applications` only' }),
            },
            { additionalProperties: false },
          ),
        ),
      },
      {
        additionalProperties: false,
        description: 'What the caller may call, from the server\'s route table (http/admin-policy.ts): the panel shows what these allow',
      },
    ),
  },
  { additionalProperties: false },
);
