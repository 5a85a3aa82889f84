/**
 * What an external provider's client does, apart from how (./clients.ts builds one; ./factories.ts
 * and ./oidc.ts implement it). Its own module so that the clients, which load the factories lazily,
 * and the factories, which implement this, need not import each other.
 */
import type { ExternalIdentity } from '../../db/schema.js';

/** The secrets of one in-flight login, created at the start and checked at the callback. */
export interface LoginSecrets {
  state: string;
  codeVerifier: string;
  nonce: string;
}

export interface ProviderClient {
  authorizationUrl(secrets: LoginSecrets): Promise<URL>;
  /** Exchanges the code from `callbackUrl` and reads the person's identity; throws `providerFailed`. */
  identity(callbackUrl: URL, secrets: LoginSecrets): Promise<ExternalIdentity>;
}
