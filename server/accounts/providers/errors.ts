/**
 * The refusals of the external sign-in flow, as problems. The flow's routes live in the hosted-page
 * scope, so each becomes an HTML error page with its status and this text (never a 500).
 */
import { Problem } from '../../http/problem.js';

/** A provider setting this server cannot use (e.g. an `OIDC_ISSUER` over plain http on a public host). */
export class ProviderSettingError extends Error {}

/** The provider could not be reached, refused the code, or sent something unusable: 502. */
export function providerFailed(
  providerName: string,
  step: 'start' | 'finish',
  cause: unknown,
  describe: (cause: unknown) => string = (c) => String((c as Error)?.message ?? c),
): Problem {
  if (cause instanceof ProviderSettingError) {
    return new Problem(503, 'provider_misconfigured', `Signing in with ${providerName} is not set up correctly on this server: ${cause.message}.`);
  }
  const detail =
    step === 'start'
      ? `${providerName} cannot be reached right now. Please try again later.`
      : `${providerName} did not confirm the sign-in. Please start again.`;
  const problem = new Problem(502, 'provider_failed', detail);
  // Kept for the log line (server/accounts/providers/routes.ts), never shown to the person.
  problem.cause = describe(cause);
  return problem;
}

export const loginExpired = () =>
  new Problem(400, 'login_expired', 'This sign-in has expired or was already used. Please start again.');

export const loginOtherBrowser = () =>
  new Problem(400, 'login_state_mismatch', 'This sign-in was started in another browser or tab. Please start again here.');
