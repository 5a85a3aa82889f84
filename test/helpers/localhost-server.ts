/**
 * A real Gatehouse whose issuer is `http://localhost:<port>`: WebAuthn accepts plain HTTP only on
 * `localhost` and refuses IP-address hosts, so passkey tests cannot use 127.0.0.1. A free port is
 * found first, because the issuer must be configured before listening.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../server/config.js';
import { start } from '../../server/main.js';
import { OAUTH_ADMIN_TOKEN, adminFetch, type OAuthServer } from './oauth-server.js';
import { freePort } from './free-port.js';


export async function startLocalhostServer(env: Record<string, string> = {}): Promise<OAuthServer> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-localhost-'));
  const issuer = `http://localhost:${port}`;
  const config = loadConfig(
    { LOG_LEVEL: 'silent', ...env },
    { dataDir, port: String(port), host: '127.0.0.1', adminToken: OAUTH_ADMIN_TOKEN, issuer },
  );
  const running = await start(config);
  return {
    running,
    url: issuer,
    admin: adminFetch(issuer),
    async stop() {
      await running.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
