/**
 * `GET|PATCH /api/admin/settings/password-policy` (spec administrators-and-people.md, "Password
 * policy"): every administrator may read it (the panel shows it beside new-password fields); only
 * the owner may change it (admin-policy.ts default). Changes are audited with old and new values.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import type { AppContext } from '../context.js';
import { actorName } from '../http/admin-auth.js';
import { adminErrors, NoQuery, adminSecurity as security } from '../http/schemas.js';
import { recordAudit } from '../audit/record.js';
import { transaction } from '../db/store.js';
import { passwordPolicy, policyHint, POLICY_MAX_LENGTH, POLICY_MIN_LENGTH, writePasswordPolicy, type PasswordPolicy } from '../accounts/password-policy.js';

const fields = {
  minLength: Type.Integer({ minimum: POLICY_MIN_LENGTH, maximum: POLICY_MAX_LENGTH, description: 'fewest characters a new password may have (default 10)' }),
  minStrength: Type.Integer({ minimum: 0, maximum: 4, description: 'lowest zxcvbn score accepted, 0 (anything) to 4 (default 2)' }),
  rejectBreached: Type.Boolean({ description: 'refuse passwords on the common-password list that ships with Gatehouse (default true)' }),
};

export const PasswordPolicySchema = Type.Object(
  { ...fields, hint: Type.String({ description: 'the policy in words, as shown beside new-password fields' }) },
  { additionalProperties: false },
);
/** What PATCH takes (and a configuration file's `passwordPolicy`: config-as-code). */
export const PasswordPolicyPatchSchema = Type.Object(
  { minLength: Type.Optional(fields.minLength), minStrength: Type.Optional(fields.minStrength), rejectBreached: Type.Optional(fields.rejectBreached) },
  { additionalProperties: false },
);
export type PasswordPolicyPatch = Static<typeof PasswordPolicyPatchSchema>;

const record = (policy: PasswordPolicy) => ({ ...policy, hint: policyHint(policy) });

/** Changes the policy, audited with its values before and after; answers the new policy. */
export async function changePasswordPolicy(ctx: AppContext, patch: PasswordPolicyPatch, actor: string): Promise<PasswordPolicy> {
  const now = ctx.clock.now();
  return await transaction(ctx.db, async (tx) => {
    const before = await passwordPolicy(tx);
    const after: PasswordPolicy = { ...before, ...patch } as PasswordPolicy;
    await writePasswordPolicy(tx, after, now);
    await recordAudit(tx, now, { actor, action: 'settings.password_policy_changed', details: { before, after } });
    return after;
  });
}

export const passwordPolicyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  const tags = ['settings'];
  app.get(
    '/settings/password-policy',
    { schema: { tags, security, summary: 'The password policy every new password must meet', querystring: NoQuery, response: { 200: PasswordPolicySchema, ...adminErrors } } },
    async () => record(await passwordPolicy(ctx.db)),
  );
  app.patch(
    '/settings/password-policy',
    {
      schema: {
        tags, security, summary: 'Change the password policy (owner only; audited)',
        querystring: NoQuery, body: PasswordPolicyPatchSchema, response: { 200: PasswordPolicySchema, ...adminErrors },
      },
    },
    async (request) => record(await changePasswordPolicy(ctx, request.body, actorName(request.actor))),
  );
};
