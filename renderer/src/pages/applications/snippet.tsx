/**
 * The integration snippet handed to a developer: issuer, client id, audience, discovery URL, jose
 * example; and, when the application uses them, machine-to-machine tokens, device sign-in and a
 * back-channel logout receiver.
 */
import { createResource, Show } from 'solid-js';
import { client, ok, type Application } from '../../api';
import { CopyButton, CopyField } from '../../ui';
import { DEVICE_GRANT } from '../../grants';

export function verifyExample(issuer: string, jwksUrl: string, audience: string, alg: string): string {
  return `// npm install jose
import { createRemoteJWKSet, jwtVerify } from 'jose';

const JWKS = createRemoteJWKSet(new URL('${jwksUrl}'));

/** Verifies a Gatehouse access token from "Authorization: Bearer <token>". */
export async function verifyAccessToken(token) {
  const { payload } = await jwtVerify(token, JWKS, {
    issuer: '${issuer}',
    audience: '${audience}',
    algorithms: ['${alg}'],
  });
  // payload.sub = the person, payload.app_user = { id, status, role }
  return payload;
}`;
}

/** A back end asking for a token for itself (client credentials, RFC 6749 §4.4), with curl and openid-client. */
export function clientCredentialsExample(issuer: string, clientId: string, audience: string): string {
  return `# The app's back end gets a token for itself (no person involved):
curl -s -u '${clientId}:<client secret>' \\
  -d grant_type=client_credentials \\
  -d resource=${audience} \\
  ${issuer}/api/auth/oauth2/token

// The same with openid-client (npm install openid-client):
import * as client from 'openid-client';
const config = await client.discovery(new URL('${issuer}'), '${clientId}', process.env.CLIENT_SECRET);
const { access_token, expires_in } = await client.clientCredentialsGrant(config, { resource: '${audience}' });
// Reuse the token until it nears expires_in, then ask again: each one is audited.
// The token's sub is '${clientId}': it acts for the app itself, with no app_user claim.`;
}

/** A device without a browser signing a person in (RFC 8628) with openid-client. */
export function deviceExample(issuer: string, clientId: string): string {
  return `// npm install openid-client
import * as client from 'openid-client';
const config = await client.discovery(new URL('${issuer}'), '${clientId}');
const started = await client.initiateDeviceAuthorization(config, { scope: 'openid offline_access' });
console.log(\`Go to \${started.verification_uri} and type \${started.user_code}\`);
const tokens = await client.pollDeviceAuthorizationGrant(config, started); // waits for the person`;
}

/** An app's back-channel logout endpoint verifying the logout token with jose. */
export function logoutReceiverExample(issuer: string, jwksUrl: string, clientId: string, alg: string): string {
  return `// POST <your backchannelLogoutUri>, form body logout_token=<JWT>
import { createRemoteJWKSet, jwtVerify } from 'jose';
const JWKS = createRemoteJWKSet(new URL('${jwksUrl}'));

export async function onBackchannelLogout(logoutToken) {
  const { payload } = await jwtVerify(logoutToken, JWKS, {
    issuer: '${issuer}', audience: '${clientId}', typ: 'logout+jwt', algorithms: ['${alg}'], maxTokenAge: '2 minutes',
  });
  if (!payload.events?.['http://schemas.openid.net/event/backchannel-logout']) throw new Error('not a logout token');
  // payload.sid: end the app session whose ID token had this sid.
  // No sid (an administrator suspended or removed the person): end every session of payload.sub.
  // Answer 200 when done; anything else is retried.
}`;
}

const t = {
  loading: 'Loading the issuer…',
  machine: 'Machine-to-machine tokens',
  machineExample: 'client credentials example',
  device: 'Device sign-in',
  deviceExample: 'device sign-in example',
  logout: 'Receive logout notices',
  logoutExample: 'logout receiver example',
  issuer: 'Issuer',
  clientId: 'Client ID',
  audience: 'Audience',
  discovery: 'Discovery URL',
  settings: 'Settings for the app',
  environment: 'environment settings',
  verify: "Verify access tokens in the app's backend",
  example: 'verification example',
  flow: ['Sign-in uses the authorization-code flow with PKCE (S256) and ', '.'] as const,
  confidential: ' This is a confidential client: the backend sends the client secret at the token endpoint.',
  public: ' This is a public client: no secret, PKCE only.',
};

/** The .env block for the app: a confidential client's secret as given (right after creation), or a placeholder. */
export function envBlock(o: { issuer: string; discoveryUrl: string }, app: Pick<Application, 'id' | 'audience' | 'clientType'>, clientSecret?: string): string {
  const lines = [`GATEHOUSE_ISSUER=${o.issuer}`, `GATEHOUSE_CLIENT_ID=${app.id}`];
  if (app.clientType === 'web') lines.push(`GATEHOUSE_CLIENT_SECRET=${clientSecret ?? SECRET_PLACEHOLDER}`);
  lines.push(`GATEHOUSE_AUDIENCE=${app.audience}`, `GATEHOUSE_DISCOVERY_URL=${o.discoveryUrl}`);
  return lines.join('\n');
}

/** Where a confidential client's secret goes when it is not shown (it is kept only as a hash). */
const SECRET_PLACEHOLDER = '<the client secret shown when it was created or rotated>';

/** `clientSecret`: the secret shown once, right after creation; elsewhere a placeholder stands in its line. */
export function IntegrationSnippet(props: { app: Application; clientSecret?: string | undefined }) {
  const [overview] = createResource(() => ok(client.GET('/api/admin/overview')));
  return (
    <Show when={overview()} fallback={<p class="muted">{t.loading}</p>}>
      {(o) => {
        // The app's own signing algorithm (its settings): a verifier names the one it expects.
        const code = () => verifyExample(o().issuer, o().jwksUrl, props.app.audience, props.app.signingAlg);
        const env = () => envBlock(o(), props.app, props.clientSecret);
        return (
          <div class="card" data-testid="integration-snippet">
            <CopyField label={t.issuer} value={o().issuer} />
            <CopyField label={t.clientId} value={props.app.id} />
            <CopyField label={t.audience} value={props.app.audience} />
            <CopyField label={t.discovery} value={o().discoveryUrl} />
            <h2>{t.settings}</h2>
            <pre>{env()}</pre>
            <CopyButton value={env()} label={t.environment} />
            <h2>{t.verify}</h2>
            <pre>{code()}</pre>
            <CopyButton value={code()} label={t.example} />
            <p class="hint">
              {t.flow[0]}
              <code>resource={props.app.audience}</code>
              {t.flow[1]}
              {props.app.clientType === 'web' ? t.confidential : t.public}
            </p>
            <Show when={props.app.grantTypes.includes('client_credentials')}>
              <h2>{t.machine}</h2>
              <pre data-testid="client-credentials-example">{clientCredentialsExample(o().issuer, props.app.id, props.app.audience)}</pre>
              <CopyButton value={clientCredentialsExample(o().issuer, props.app.id, props.app.audience)} label={t.machineExample} />
            </Show>
            <Show when={props.app.grantTypes.includes(DEVICE_GRANT)}>
              <h2>{t.device}</h2>
              <pre data-testid="device-example">{deviceExample(o().issuer, props.app.id)}</pre>
              <CopyButton value={deviceExample(o().issuer, props.app.id)} label={t.deviceExample} />
            </Show>
            <Show when={props.app.backchannelLogoutUri}>
              <h2>{t.logout}</h2>
              <pre data-testid="logout-example">{logoutReceiverExample(o().issuer, o().jwksUrl, props.app.id, props.app.signingAlg)}</pre>
              <CopyButton value={logoutReceiverExample(o().issuer, o().jwksUrl, props.app.id, props.app.signingAlg)} label={t.logoutExample} />
            </Show>
          </div>
        );
      }}
    </Show>
  );
}
