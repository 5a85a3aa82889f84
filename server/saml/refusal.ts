/**
 * Why the identity provider refused a message (spec saml.md, "Single sign-on", "Hostile input"):
 * a stable reason code, shown on the hosted error page in the person's words
 * (`saml.refused.<reason>` in server/i18n/messages), written to the audit log as `saml.refused`
 * with that reason (never the XML), and counted. The `detail` is for the audit log only: it says
 * what was wrong in English, never echoing the message.
 */
import type { Application } from '../db/schema.js';

export const REFUSAL_REASONS = [
  // The bytes and the XML (xml.ts, bindings.ts).
  'bad_encoding',
  'inflate_too_large',
  'too_large',
  'not_well_formed',
  'dtd_forbidden',
  'too_deep',
  'duplicate_id',
  // The binding and the message.
  'bad_binding',
  'unexpected_message',
  'relay_state_too_long',
  'bad_destination',
  'expired',
  'replay',
  // Who sent it, and whether they signed it (signature.ts).
  'unknown_sp',
  'bad_acs',
  'unsigned',
  'sha1_refused',
  'bad_signature',
  // IdP-initiated sign-on and logout.
  'idp_initiated_off',
  'unknown_request',
] as const;

export type RefusalReason = (typeof REFUSAL_REASONS)[number];

export class SamlRefusal extends Error {
  /** The SP the message came from, once known (its page is branded, its audit entry names it). */
  app: Application | undefined;

  constructor(
    readonly reason: RefusalReason,
    readonly detail: string,
  ) {
    super(`${reason}: ${detail}`);
    this.name = 'SamlRefusal';
  }
}

/** Runs `fn`, naming `app` in any refusal it throws. */
export async function fromSp<T>(app: Application, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof SamlRefusal) error.app ??= app;
    throw error;
  }
}
