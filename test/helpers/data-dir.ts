/** Temporary data directories and real servers on 127.0.0.1 for operations tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { perFile } from './per-file.js';
import { loadConfig } from '../../server/config.js';
import { start, type Running } from '../../server/main.js';
import { useTestHashCost } from './hash-cost.js';

export const OPS_ADMIN_TOKEN = 'ops-admin-token-0123456789abcdef';

const dirs: string[] = [];
const servers: Running[] = [];
perFile({
  afterEach: async () => {
    while (servers.length) await servers.pop()!.stop();
    while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
  },
});

export function tempDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-ops-'));
  dirs.push(dir);
  return dir;
}

/** `start()` as `gatehouse serve` would, on a free port, logs silenced. */
export async function startServer(dataDir: string, env: Record<string, string> = {}): Promise<Running> {
  const config = loadConfig({ GATEHOUSE_DATA_DIR: dataDir, PORT: '0', ADMIN_TOKEN: OPS_ADMIN_TOKEN, LOG_LEVEL: 'silent', ...env });
  // In this process: hashing at the test cost, like makeApp's apps (test/helpers/hash-cost.ts).
  useTestHashCost();
  const running = await start(config);
  servers.push(running);
  return running;
}

/** A port nothing listens on right now (for a second listener such as the plain-http CA port). */
export { freePort } from './free-port.js';
