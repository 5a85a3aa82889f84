/**
 * OAuth clients for the external sign-in providers of DESIGN §4.9. Each one builds the
 * authorization URL (RFC 6749 §4.1.1 with PKCE S256, RFC 7636, and an OIDC `nonce` where the
 * provider issues ID tokens) and, at the callback, exchanges the code and reads who signed in.
 *
 * `google`, `microsoft`, `gitlab`, `github` and `discord` go through arctic; the generic `oidc`
 * provider goes through openid-client (./oidc.ts), which also validates its ID token. Both load
 * with ./factories.ts on the first external sign-in, not at start-up.
 */
import type { Config } from '../../config.js';
import { providerFailed } from './errors.js';
import type { ProviderClient } from './provider-client.js';

/** The provider factories and the libraries behind them, loaded once on first use. */
let factories: Promise<typeof import('./factories.js')> | undefined;
const loadFactories = () => (factories ??= import('./factories.js'));

/** The callback each provider is registered with (DESIGN §4.9). */
export function callbackUri(config: Config, providerId: string): string {
  return `${config.issuer}/api/auth/callback/${providerId}`;
}

/**
 * The client for a configured external provider. Library and network errors surface as
 * `providerFailed` problems (an error page naming the provider), never as a 500.
 */
export function providerClient(config: Config, providerId: string, providerName: string): ProviderClient {
  let client: Promise<{ client: ProviderClient; describe: (cause: unknown) => string }> | undefined;
  const load = () =>
    (client ??= loadFactories().then(({ FACTORIES, describeFailure }) => {
      const factory = FACTORIES[providerId];
      if (!factory) throw new Error(`no client for provider ${providerId}`);
      return { client: factory(config.env, callbackUri(config, providerId)), describe: describeFailure };
    }));
  const guard = async <T>(step: 'start' | 'finish', run: (client: ProviderClient) => Promise<T>): Promise<T> => {
    const loaded = await load();
    try {
      return await run(loaded.client);
    } catch (error) {
      throw providerFailed(providerName, step, error, loaded.describe);
    }
  };
  return {
    authorizationUrl: (secrets) => guard('start', async (c) => c.authorizationUrl(secrets)),
    identity: (url, secrets) => guard('finish', async (c) => c.identity(url, secrets)),
  };
}
