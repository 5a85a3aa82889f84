/** The integration snippet handed to a developer: issuer, client id, audience, discovery URL, jose example. */
import { createResource, Show } from 'solid-js';
import { client, ok, type Application } from '../api';
import { CopyButton, CopyField } from '../ui';

export function verifyExample(issuer: string, jwksUrl: string, audience: string): string {
  return `// npm install jose
import { createRemoteJWKSet, jwtVerify } from 'jose';

const JWKS = createRemoteJWKSet(new URL('${jwksUrl}'));

/** Verifies a Gatehouse access token from "Authorization: Bearer <token>". */
export async function verifyAccessToken(token) {
  const { payload } = await jwtVerify(token, JWKS, {
    issuer: '${issuer}',
    audience: '${audience}',
    algorithms: ['RS256'],
  });
  // payload.sub = the person, payload.app_user = { id, status, role }
  return payload;
}`;
}

const t = {
  loading: 'Loading the issuer…',
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

export function IntegrationSnippet(props: { app: Application }) {
  const [overview] = createResource(() => ok(client.GET('/api/admin/overview')));
  return (
    <Show when={overview()} fallback={<p class="muted">{t.loading}</p>}>
      {(o) => {
        const code = () => verifyExample(o().issuer, o().jwksUrl, props.app.audience);
        const env = () =>
          `GATEHOUSE_ISSUER=${o().issuer}\nGATEHOUSE_CLIENT_ID=${props.app.id}\nGATEHOUSE_AUDIENCE=${props.app.audience}\nGATEHOUSE_DISCOVERY_URL=${o().discoveryUrl}`;
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
          </div>
        );
      }}
    </Show>
  );
}
