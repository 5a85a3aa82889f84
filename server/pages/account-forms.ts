/**
 * What the account page's sections share (account-page.ts wires them): the notices a form's
 * success comes back with, the form schemas' common parts, the anchor of an application's part of
 * the page, and `PageForms`, the page's form helpers each built-in section's routes are given (the
 * plugins' sections get the narrower `AccountForms` of plugin-api/registries.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { authRateLimits } from '../accounts/rate-limits.js';
import type { Me } from '../self-service/service.js';
import type { AccountFlash, ErrorTarget } from './account-flash.js';

/**
 * The notices a form's success comes back with (`/account?notice=…`): keys of `account.notices`.
 * The plugins' sections bring their own (plugin-api/registries.ts `AccountSection.notices`).
 */
export const NOTICES = [
  'profile_saved', 'session_ended', 'others_signed_out', 'account_unlinked', 'account_linked', 'password_changed', 'signed_out',
  'totp_enabled', 'totp_removed', 'passkey_added', 'passkey_renamed', 'passkey_removed', 'verification_sent', 'consent_withdrawn',
  'names_saved',
] as const;
export type Notice = (typeof NOTICES)[number];

export const short = (max: number) => Type.Optional(Type.String({ maxLength: max }));
export const CsrfOnly = Type.Object({ csrf_token: short(200) }, { additionalProperties: false });

/** The anchor of an application's part of the page (its profile form and consent). */
export const appAnchor = (appId: string) => `app-${appId.replace(/[^a-zA-Z0-9_-]/g, '_')}`;

/** The page's routes' Fastify instance (TypeBox schemas, the hosted-page scope). */
export type PageApp = Parameters<FastifyPluginAsyncTypebox>[0];

/** The form helpers of the page (account-page.ts), for the built-in sections' routes. */
export interface PageForms {
  /** The CSRF check, then the caller; undefined when signed out (answer `back(reply, 'signed_out')`). */
  caller(request: FastifyRequest, token: string | undefined): Promise<Me | undefined>;
  /** Runs a form's action; a refusal is shown at `target`'s section after a 303 (post/redirect/get). */
  act(
    request: FastifyRequest, reply: FastifyReply, target: ErrorTarget,
    action: () => unknown, values?: AccountFlash['values'], labels?: Map<string, string>,
  ): Promise<FastifyReply | undefined>;
  /** Post/redirect/get: back to the page, at the section the form belongs to, saying what happened. */
  back(reply: FastifyReply, notice: Notice | string, anchor?: string): FastifyReply;
  /** The sign-in rate limits (accounts/rate-limits.ts) some forms share. */
  limits: ReturnType<typeof authRateLimits>;
}
