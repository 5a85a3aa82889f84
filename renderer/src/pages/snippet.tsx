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

export function IntegrationSnippet(props: { app: Application }) {
  const [overview] = createResource(() => ok(client.GET('/api/admin/overview')));
  return (
    <Show when={overview()} fallback={<p class="muted">Loading the issuer…</p>}>
      {(o) => {
        const code = () => verifyExample(o().issuer, o().jwksUrl, props.app.audience);
        const env = () =>
          `GATEHOUSE_ISSUER=${o().issuer}\nGATEHOUSE_CLIENT_ID=${props.app.id}\nGATEHOUSE_AUDIENCE=${props.app.audience}\nGATEHOUSE_DISCOVERY_URL=${o().discoveryUrl}`;
        return (
          <div class="card" data-testid="integration-snippet">
            <CopyField label="Issuer" value={o().issuer} />
            <CopyField label="Client ID" value={props.app.id} />
            <CopyField label="Audience" value={props.app.audience} />
            <CopyField label="Discovery URL" value={o().discoveryUrl} />
            <h2>Settings for the app</h2>
            <pre>{env()}</pre>
            <CopyButton value={env()} label="environment settings" />
            <h2>Verify access tokens in the app's backend</h2>
            <pre>{code()}</pre>
            <CopyButton value={code()} label="verification example" />
            <p class="hint">
              Sign-in uses the authorization-code flow with PKCE (S256) and <code>resource={props.app.audience}</code>.
              {props.app.clientType === 'web' ? ' This is a confidential client: the backend sends the client secret at the token endpoint.' : ' This is a public client: no secret, PKCE only.'}
            </p>
          </div>
        );
      }}
    </Show>
  );
}
